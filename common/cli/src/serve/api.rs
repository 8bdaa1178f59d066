//! The HTTP routes of `retro serve`, and how errors become one-line JSON answers.
//!
//! | route | answer |
//! | --- | --- |
//! | `GET /api/probe?<position>` | the game's probe report (value, meaning, every move best first with its value, principal variation) plus `table` |
//! | `GET /api/board?<table>` | the board as the viewer draws it, plus `table` and `example` |
//! | `GET /api/svg?<position>` | the position as an SVG image |
//! | `GET /api/tables` | every served directory |
//! | `GET /api/extremes?<table>` | the table's interesting positions, as `retro extremes` recorded them (404 until it has) |
//! | `GET /` and its assets | the web viewer |
//!
//! A position is `position=<notation>` (any game) or the game's viewer parameters (Sixteen
//! Musashi: `size=25&turn=brown&init=ooooo,o...o,o.X.o,o...o,ooooo`); the directory is chosen
//! by `table=`, `game=` or the viewer parameters ([`Served::choose`]). Errors are
//! `{"error": "..."}`: 400 for a malformed request, 404 for a table not served or a position
//! the tables do not hold, 500 only for damaged tables.

use super::assets;
use super::served::{Directory, NoSuchTable, Served};
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query as QueryParams, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use retro_pipeline::{LookupError, Query};
use retro_store::StoreError;
use std::sync::Arc;

/// The routes, sharing `served`.
pub fn router(served: Arc<Served>) -> Router {
    Router::new()
        .route("/api/probe", get(probe))
        .route("/api/board", get(board))
        .route("/api/svg", get(svg))
        .route("/api/tables", get(tables))
        .route("/api/extremes", get(extremes))
        .route("/", get(|| async { assets::page() }))
        .route("/viewer.js", get(|| async { assets::script() }))
        .route("/viewer.css", get(|| async { assets::style() }))
        .fallback(|| async {
            ApiError(
                StatusCode::NOT_FOUND,
                "no such page (the API: /api/probe, /api/board, /api/svg, /api/tables, /api/extremes)".into(),
            )
        })
        .with_state(served)
}

/// An error answer: a status and one line, sent as `{"error": "..."}`.
#[derive(Debug)]
pub struct ApiError(pub StatusCode, pub String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(serde_json::json!({ "error": self.1 }))).into_response()
    }
}

impl From<anyhow::Error> for ApiError {
    /// 404 for what the tables do not hold, 500 for damaged tables, 400 for everything else
    /// (a position or parameter the game's notation refuses).
    fn from(e: anyhow::Error) -> ApiError {
        let mut status = StatusCode::BAD_REQUEST;
        for cause in e.chain() {
            if let Some(lookup) = cause.downcast_ref::<LookupError>() {
                status = match lookup {
                    LookupError::NotSolved(_) => StatusCode::NOT_FOUND,
                    LookupError::Damaged(_) => StatusCode::INTERNAL_SERVER_ERROR,
                };
                break;
            }
            if cause.downcast_ref::<StoreError>().is_some() {
                status = StatusCode::INTERNAL_SERVER_ERROR;
                break;
            }
            if cause.downcast_ref::<NoSuchTable>().is_some() {
                status = StatusCode::NOT_FOUND;
                break;
            }
        }
        let text = retro_pipeline::process::error_text(&e).replace('\n', " ");
        ApiError(status, text)
    }
}

impl From<NoSuchTable> for ApiError {
    fn from(e: NoSuchTable) -> ApiError {
        ApiError(StatusCode::NOT_FOUND, e.0)
    }
}

/// The query parameters, or a 400 saying why they cannot be read.
fn params(query: Result<QueryParams<Query>, QueryRejection>) -> Result<Query, ApiError> {
    query
        .map(|QueryParams(q)| q)
        .map_err(|e| ApiError(StatusCode::BAD_REQUEST, format!("bad query string: {e}")))
}

/// The directory and position (in its game's notation) a request names.
fn position<'a>(served: &'a Served, query: &Query) -> Result<(&'a Directory, String), ApiError> {
    let dir = served.choose(query)?;
    let text = match query.get("position") {
        Some(p) => p.trim().to_string(),
        None => dir.explorer().position_from_query(query)?,
    };
    Ok((dir, text))
}

/// `GET /api/probe`: the game's probe report of the position (JSON text), with the table's
/// name (`table`) and the viewer parameters of the position (`query`, for links) added; an
/// answer made before is sent again from the answers cache.
pub fn probe_json(served: &Served, query: &Query) -> Result<Bytes, ApiError> {
    let (dir, text) = position(served, query)?;
    served.answers.get_or_make(dir.number, &text, || {
        make_probe_json(dir, &text).map(Bytes::from)
    })
}

/// The probe answer for `text` of `dir`, made now (what the answers cache keeps).
pub fn make_probe_json(dir: &Directory, text: &str) -> Result<String, ApiError> {
    let explorer = dir.explorer();
    let report = explorer.probe_json(text, &dir.tables)?;
    let viewer = explorer.query_of_position(text)?;
    // The report is one JSON object: the two fields go in front of its own.
    let Some(fields) = report.strip_prefix('{') else {
        return Ok(report);
    };
    let mut body = String::with_capacity(report.len() + 128);
    body.push_str("{\"table\":");
    body.push_str(&serde_json::Value::from(dir.name.as_str()).to_string());
    if !viewer.is_empty() {
        body.push_str(",\"query\":");
        body.push_str(&serde_json::to_string(&viewer).unwrap_or_else(|_| "{}".into()));
    }
    if fields.trim_start() != "}" {
        body.push(',');
    }
    body.push_str(fields);
    Ok(body)
}

/// The directory and position a request names, and the answer made now, without the answers
/// cache: what a probe itself costs (`retro bench-serve`).
pub fn probe_json_uncached(served: &Served, query: &Query) -> Result<String, ApiError> {
    let (dir, text) = position(served, query)?;
    make_probe_json(dir, &text)
}

async fn probe(
    State(served): State<Arc<Served>>,
    query: Result<QueryParams<Query>, QueryRejection>,
) -> Result<Response, ApiError> {
    let query = params(query)?;
    // A probe reads a few hundred cached values (tens of microseconds); a cold one
    // decompresses blocks of 16 KiB. Both are short enough to answer on the runtime's own
    // threads.
    let body = probe_json(&served, &query)?;
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

async fn board(
    State(served): State<Arc<Served>>,
    query: Result<QueryParams<Query>, QueryRejection>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let query = params(query)?;
    let dir = served.choose(&query)?;
    let explorer = dir.explorer();
    let mut board = explorer.board().unwrap_or_else(|| serde_json::json!({}));
    if let Some(object) = board.as_object_mut() {
        object.insert("table".into(), dir.name.clone().into());
        object.insert("example".into(), explorer.example().into());
    }
    Ok(Json(board))
}

async fn svg(
    State(served): State<Arc<Served>>,
    query: Result<QueryParams<Query>, QueryRejection>,
) -> Result<Response, ApiError> {
    let query = params(query)?;
    let (dir, text) = position(&served, &query)?;
    let image = dir.explorer().svg(&text)?;
    Ok(([(header::CONTENT_TYPE, "image/svg+xml")], image).into_response())
}

async fn tables(State(served): State<Arc<Served>>) -> Json<serde_json::Value> {
    Json(serde_json::Value::Array(
        served.dirs.iter().map(Directory::summary).collect(),
    ))
}

/// `GET /api/extremes`: the record `retro extremes` left in the table's directory (read at each
/// request, so a record made while the server runs is served), or 404 saying how to make it.
async fn extremes(
    State(served): State<Arc<Served>>,
    query: Result<QueryParams<Query>, QueryRejection>,
) -> Result<Json<retro_pipeline::Extremes>, ApiError> {
    let query = params(query)?;
    let dir = served.choose(&query)?;
    match crate::extremes::load(dir.tables.dir())? {
        Some(found) => Ok(Json(found)),
        None => Err(ApiError(
            StatusCode::NOT_FOUND,
            format!(
                "no interesting positions recorded for {}: run retro extremes --out {}",
                dir.name,
                dir.tables.dir().display()
            ),
        )),
    }
}
