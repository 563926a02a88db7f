//! `GET /notices.php`: the project's notice feed (docs/design.md "Protocol facts",
//! notices), an RSS 2.0 document of the operator's news (`--notice`), which every
//! scheduler reply names in `<rss_feeds>`. Each item is dated when the server started
//! and keyed by its place in the list, so a client fetching the feed again sees the
//! same items.

use super::super::server::ServerState;
use actix_web::{HttpResponse, web};
use boinc_core::protocol::{Notice, write_rss};

pub(crate) async fn notices(state: web::Data<ServerState>) -> HttpResponse {
    let published = state.started_at;
    let items: Vec<Notice> = state
        .config
        .notices
        .iter()
        .enumerate()
        .rev()
        .map(|(index, item)| Notice {
            title: item.title.clone(),
            description: item.text.clone(),
            create_time: published,
            link: state.urls.master.clone(),
            guid: format!("{}notices.php?item={index}", state.urls.master),
            ..Notice::default()
        })
        .collect();
    let title = format!("{} news", state.config.name);
    HttpResponse::Ok().content_type("application/rss+xml").body(write_rss(
        &title,
        &state.urls.master,
        &items,
    ))
}
