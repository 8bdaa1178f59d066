//! The web viewer, embedded in the binary (plain HTML, CSS and JavaScript; no build step).
//! The page draws boards with the server's own SVG (`/api/svg`) and reads values from
//! `/api/probe`; see `assets/viewer.js`.

use axum::http::header;
use axum::response::{IntoResponse, Response};

/// The page.
pub fn page() -> Response {
    (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        include_str!("assets/index.html"),
    )
        .into_response()
}

/// The page's script.
pub fn script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        include_str!("assets/viewer.js"),
    )
        .into_response()
}

/// The page's style sheet.
pub fn style() -> Response {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        include_str!("assets/viewer.css"),
    )
        .into_response()
}
