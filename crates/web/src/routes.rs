//! The dashboard's HTTP routes (docs/dashboard.md): the login, the pages, their script
//! and style, the GUI RPC bridge every page reads and acts through, the live update
//! stream, `explain`, and `/metrics`.
//!
//! Who gets in: a host GUI RPC would refuse (remote_hosts.cfg, `<allow_remote_gui_rpc>`)
//! is refused everything. A page, the bridge, the stream and `explain` need a session
//! (a login with the GUI RPC password); the bridge, being where actions go, also needs
//! the session's CSRF token in a header, which another site's page cannot read or send.
//! `/metrics` is read-only, so, as GUI RPC's read-only operations, a browser-less
//! scraper on this host gets it without logging in; one elsewhere sends the password as
//! a bearer token.

use super::account_lookup::lookup;
use super::assets::{self, CONTENT_SECURITY_POLICY};
use super::events::{StreamSlots, updates};
use super::explain::explain_text;
use super::history::SharedHistory;
use super::metrics::{self, render};
use super::sessions::{COOKIE, CSRF_HEADER, Sessions, same_secret};
use super::timeline::timeline_svg;
use actix_web::dev::Payload;
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::{FromRequest, HttpRequest, HttpResponse, web};
use boinc_core::protocol::gui_rpc::{Request, frame_reply, parse_request};
use boinc_gui_rpc::{LocalRpc, is_local};
use cookie::{Cookie, SameSite};
use std::future::{Ready, ready};
use std::time::Instant;

/// The largest GUI RPC request the bridge takes, bytes (a preferences override or an
/// app_config.xml fits many times over).
pub(crate) const MAX_RPC_BODY: usize = 256 * 1024;
/// The largest form (login, account lookup), bytes.
pub(crate) const MAX_FORM: usize = 16 * 1024;

/// What every request shares.
pub(crate) struct Dashboard {
    pub(crate) rpc: LocalRpc,
    pub(crate) sessions: Sessions,
    pub(crate) streams: StreamSlots,
    pub(crate) history: SharedHistory,
}

fn dashboard(request: &HttpRequest) -> Option<&Dashboard> {
    request.app_data::<web::Data<Dashboard>>().map(|data| data.get_ref())
}

/// A request from a host GUI RPC would admit.
struct Admitted {
    local: bool,
}

impl FromRequest for Admitted {
    type Error = actix_web::Error;
    type Future = Ready<Result<Self, Self::Error>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        let admitted = match (request.peer_addr(), dashboard(request)) {
            (Some(peer), Some(dashboard)) if dashboard.rpc.remote_access().allows(peer.ip()) => {
                Ok(Admitted { local: is_local(peer.ip()) })
            }
            _ => Err(actix_web::error::ErrorForbidden(
                "this host may not use the dashboard: list it in the client's remote_hosts.cfg, \
                 as for remote GUI RPC",
            )),
        };
        ready(admitted)
    }
}

/// A request from an admitted host with an open session.
struct LoggedIn {
    session: String,
    csrf: String,
}

fn session_cookie(request: &HttpRequest) -> Option<String> {
    request
        .headers()
        .get_all(header::COOKIE)
        .filter_map(|value| value.to_str().ok())
        .flat_map(Cookie::split_parse)
        .filter_map(Result::ok)
        .find(|cookie| cookie.name() == COOKIE)
        .map(|cookie| cookie.value().to_owned())
}

impl FromRequest for LoggedIn {
    type Error = actix_web::Error;
    type Future = Ready<Result<Self, Self::Error>>;

    fn from_request(request: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let admitted = Admitted::from_request(request, payload).into_inner();
        let logged_in = admitted.and_then(|_| {
            let session = session_cookie(request);
            let dashboard = dashboard(request);
            let csrf = session
                .as_deref()
                .zip(dashboard)
                .and_then(|(id, dashboard)| dashboard.sessions.csrf_of(id, Instant::now()));
            match (session, csrf) {
                (Some(session), Some(csrf)) => Ok(LoggedIn { session, csrf }),
                _ => Err(actix_web::error::ErrorUnauthorized(
                    "not logged in: log in at /login with the GUI RPC password",
                )),
            }
        });
        ready(logged_in)
    }
}

impl LoggedIn {
    /// Whether the request carries the session's CSRF token.
    fn sent_token(&self, request: &HttpRequest) -> bool {
        request
            .headers()
            .get(CSRF_HEADER)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|token| same_secret(token, &self.csrf))
    }
}

fn forbidden_without_token() -> HttpResponse {
    HttpResponse::Forbidden()
        .body("the request lacks this session's CSRF token: reload the page and try again")
}

fn see_other(location: &str) -> HttpResponse {
    HttpResponse::SeeOther().insert_header((header::LOCATION, location)).finish()
}

fn html(status: StatusCode, body: String) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .body(body)
}

/// The session cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's
/// page sends it), for the whole dashboard; `max_age` 0 removes it.
fn cookie_header(value: &str, remove: bool) -> String {
    let mut cookie = Cookie::build((COOKIE, value.to_owned()))
        .path("/")
        .http_only(true)
        .same_site(SameSite::Strict);
    if remove {
        cookie = cookie.max_age(cookie::time::Duration::ZERO);
    }
    cookie.build().to_string()
}

async fn root(_: Admitted) -> HttpResponse {
    see_other("/overview")
}

async fn login_page(_: Admitted) -> HttpResponse {
    html(StatusCode::OK, assets::login(None))
}

#[derive(serde::Deserialize)]
struct LoginForm {
    password: String,
}

async fn login(
    admitted: Admitted,
    dashboard: web::Data<Dashboard>,
    form: web::Form<LoginForm>,
) -> HttpResponse {
    let password = dashboard.rpc.password();
    // An empty password lets only this host in, as GUI RPC does; never another one.
    let open = password.is_empty() && admitted.local;
    if !(open || (!password.is_empty() && same_secret(&form.password, password))) {
        tracing::info!("dashboard: a login with a wrong password was refused");
        let problem = "Wrong password: use the one in the client's gui_rpc_auth.cfg.";
        return html(StatusCode::UNAUTHORIZED, assets::login(Some(problem)));
    }
    let (session, _) = dashboard.sessions.open(Instant::now());
    let mut response = see_other("/overview");
    if let Ok(value) = HeaderValue::from_str(&cookie_header(&session, false)) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

async fn logout(
    request: HttpRequest,
    user: LoggedIn,
    dashboard: web::Data<Dashboard>,
) -> HttpResponse {
    if !user.sent_token(&request) {
        return forbidden_without_token();
    }
    dashboard.sessions.close(&user.session);
    let mut response = see_other("/login");
    if let Ok(value) = HeaderValue::from_str(&cookie_header("", true)) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

async fn page(user: Option<LoggedIn>, name: web::Path<String>) -> HttpResponse {
    let Some(user) = user else {
        return see_other("/login");
    };
    match assets::page(&name, &user.csrf) {
        Some(body) => html(StatusCode::OK, body),
        None => HttpResponse::NotFound().body("no such page"),
    }
}

fn asset(content_type: &str, body: &'static str) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(content_type)
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .body(body)
}

async fn script(_: Admitted) -> HttpResponse {
    asset("text/javascript; charset=utf-8", assets::SCRIPT)
}

async fn style(_: Admitted) -> HttpResponse {
    asset("text/css; charset=utf-8", assets::STYLE)
}

fn xml(body: &[u8]) -> HttpResponse {
    let mut framed = frame_reply(body);
    framed.pop(); // the wire's terminator byte
    HttpResponse::Ok().content_type("application/xml; charset=utf-8").body(framed)
}

/// The GUI RPC bridge: one request, as boinccmd would send it, carried out as a
/// connection that has authenticated would.
async fn rpc(
    request: HttpRequest,
    user: LoggedIn,
    dashboard: web::Data<Dashboard>,
    body: web::Bytes,
) -> HttpResponse {
    if !user.sent_token(&request) {
        return forbidden_without_token();
    }
    let operation = match parse_request(&body) {
        Request::Operation { operation: Ok(operation), .. } => operation,
        Request::Operation { operation: Err(error), .. } => {
            return xml(&boinc_core::protocol::gui_rpc::error(&error.to_string()));
        }
        Request::Auth1 | Request::Auth2 { .. } => {
            return HttpResponse::BadRequest().body("the dashboard's session is the login");
        }
        Request::Missing | Request::Malformed(_) | Request::Unrecognized(_) => {
            return HttpResponse::BadRequest()
                .body("not a GUI RPC request: send <boinc_gui_rpc_request> with one operation");
        }
    };
    xml(&dashboard.rpc.execute(operation).await)
}

#[derive(serde::Deserialize)]
struct AccountForm {
    url: String,
    email: String,
    password: String,
}

/// Starts looking an account up by e-mail address and password (see
/// [`super::account_lookup`]); the page polls `lookup_account_poll` through the bridge.
async fn lookup_account(
    request: HttpRequest,
    user: LoggedIn,
    dashboard: web::Data<Dashboard>,
    form: web::Form<AccountForm>,
) -> HttpResponse {
    if !user.sent_token(&request) {
        return forbidden_without_token();
    }
    xml(&dashboard.rpc.execute(lookup(&form.url, &form.email, &form.password)).await)
}

async fn events(_: LoggedIn, dashboard: web::Data<Dashboard>) -> HttpResponse {
    let Some(slot) = dashboard.streams.take() else {
        return HttpResponse::ServiceUnavailable()
            .insert_header((header::RETRY_AFTER, "10"))
            .body("too many open dashboard pages: close some");
    };
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .streaming(updates(dashboard.rpc.client(), slot))
}

async fn explain(_: LoggedIn, dashboard: web::Data<Dashboard>) -> HttpResponse {
    match dashboard.rpc.client().snapshot().await {
        Ok(snapshot) => {
            let text = web::block(move || explain_text(&snapshot)).await;
            match text {
                Ok(text) => HttpResponse::Ok().content_type("text/plain; charset=utf-8").body(text),
                Err(error) => HttpResponse::InternalServerError().body(error.to_string()),
            }
        }
        Err(error) => HttpResponse::ServiceUnavailable().body(error.to_string()),
    }
}

async fn timeline(_: LoggedIn, dashboard: web::Data<Dashboard>) -> HttpResponse {
    match dashboard.rpc.client().snapshot().await {
        Ok(snapshot) => {
            let (runs, since) = {
                let history = dashboard.history.lock();
                (history.runs(snapshot.time), history.since)
            };
            let svg = timeline_svg(&snapshot.state, &runs, since, snapshot.time);
            HttpResponse::Ok()
                .content_type("image/svg+xml")
                .insert_header((header::CACHE_CONTROL, "no-store"))
                .body(svg)
        }
        Err(error) => HttpResponse::ServiceUnavailable().body(error.to_string()),
    }
}

/// Whether a scraper sent the GUI RPC password as a bearer token.
fn bearer_password(request: &HttpRequest, password: &str) -> bool {
    let sent = request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
    let token = sent.and_then(|value| value.strip_prefix("Bearer "));
    !password.is_empty() && token.is_some_and(|token| same_secret(token.trim(), password))
}

async fn metrics_page(
    request: HttpRequest,
    admitted: Admitted,
    user: Option<LoggedIn>,
    dashboard: web::Data<Dashboard>,
) -> HttpResponse {
    let allowed =
        admitted.local || user.is_some() || bearer_password(&request, dashboard.rpc.password());
    if !allowed {
        return HttpResponse::Unauthorized()
            .insert_header((header::WWW_AUTHENTICATE, "Bearer"))
            .body("send the GUI RPC password as a bearer token");
    }
    match dashboard.rpc.client().snapshot().await {
        Ok(snapshot) => {
            let text = render(&snapshot, &dashboard.history.lock());
            HttpResponse::Ok().content_type(metrics::CONTENT_TYPE).body(text)
        }
        Err(error) => HttpResponse::ServiceUnavailable().body(error.to_string()),
    }
}

/// Mounts the routes.
pub(crate) fn routes(config: &mut web::ServiceConfig) {
    config
        .app_data(web::PayloadConfig::new(MAX_RPC_BODY))
        .app_data(web::FormConfig::default().limit(MAX_FORM))
        .route("/", web::get().to(root))
        .route("/login", web::get().to(login_page))
        .route("/login", web::post().to(login))
        .route("/logout", web::post().to(logout))
        .route("/assets/app.js", web::get().to(script))
        .route("/assets/style.css", web::get().to(style))
        .route("/api/rpc", web::post().to(rpc))
        .route("/api/lookup-account", web::post().to(lookup_account))
        .route("/api/events", web::get().to(events))
        .route("/api/explain", web::get().to(explain))
        .route("/api/timeline.svg", web::get().to(timeline))
        .route("/metrics", web::get().to(metrics_page))
        .route("/{page}", web::method(Method::GET).to(page));
}
