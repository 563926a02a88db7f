//! The project server's HTTP routes.

mod account_manager_rpc;
mod admin;
mod download;
mod fault_response;
mod master;
mod notices;
mod scheduler_rpc;
mod status;
mod upload;
mod web_rpc;

use actix_web::dev::Extensions;
use actix_web::web;
use std::any::Any;
use std::os::fd::{AsRawFd, RawFd};

/// The socket of a request's connection (for a reset on purpose).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnectionSocket(pub RawFd);

/// Keeps each connection's socket in its extensions.
pub(crate) fn remember_connection(connection: &dyn Any, extensions: &mut Extensions) {
    if let Some(stream) = connection.downcast_ref::<actix_web::rt::net::TcpStream>() {
        extensions.insert(ConnectionSocket(stream.as_raw_fd()));
    }
}

/// Mounts the routes.
pub(crate) fn configure(config: &mut web::ServiceConfig) {
    config
        .service(web::resource("/").route(web::get().to(master::master_page)))
        .service(
            web::resource("/cgi")
                .app_data(web::PayloadConfig::new(super::config::MAX_SCHEDULER_REQUEST_BYTES))
                .route(web::post().to(scheduler_rpc::scheduler)),
        )
        .service(web::resource("/download/{name}").route(web::get().to(download::download)))
        .service(web::resource("/file_upload_handler").route(web::post().to(upload::upload)))
        .service(web::resource("/status").route(web::get().to(status::status)))
        .service(web::resource("/notices.php").route(web::get().to(notices::notices)))
        .service(web::resource("/lookup_account.php").route(web::get().to(web_rpc::lookup_account)))
        .service(web::resource("/create_account.php").route(web::get().to(web_rpc::create_account)))
        .service(
            web::resource("/get_project_config.php")
                .route(web::get().to(web_rpc::get_project_config)),
        )
        .service(
            web::resource("/account_manager/rpc.php")
                .app_data(web::PayloadConfig::new(
                    account_manager_rpc::MAX_ACCOUNT_MANAGER_REQUEST_BYTES,
                ))
                .route(web::post().to(account_manager_rpc::account_manager_rpc)),
        )
        .service(
            web::resource("/admin/account_manager")
                .route(web::get().to(admin::account_manager_config))
                .route(web::put().to(admin::replace_account_manager_config)),
        )
        .service(
            web::resource("/admin/faults")
                .route(web::get().to(admin::list_faults))
                .route(web::post().to(admin::add_faults))
                .route(web::delete().to(admin::clear_faults)),
        )
        .service(web::resource("/admin/rotate_key").route(web::post().to(admin::rotate_key)));
}
