//! Waiting for `object_store`'s futures from blocking code.

use anyhow::{anyhow, Result};
use std::future::Future;

/// A small runtime of its own on which requests run while the calling thread waits. Calling
/// threads may be plain threads or threads of another runtime (the worker's): the request is
/// spawned here and its answer received over a channel, so no runtime is ever entered twice.
pub struct Waiter {
    runtime: Option<tokio::runtime::Runtime>,
}

impl Waiter {
    /// A runtime with two threads (requests of one storage are few and large).
    pub fn new() -> Result<Waiter> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("retro-objects")
            .enable_all()
            .build()
            .map_err(|e| anyhow!("cannot start the object store's runtime: {e}"))?;
        Ok(Waiter {
            runtime: Some(runtime),
        })
    }

    /// Runs `request` to completion and returns its result.
    pub fn wait<T, E, F>(&self, request: F) -> Result<T>
    where
        F: Future<Output = Result<T, E>> + Send + 'static,
        T: Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        let (tx, rx) = std::sync::mpsc::channel();
        let runtime = self.runtime.as_ref().expect("the runtime lives until drop");
        runtime.spawn(async move {
            let _ = tx.send(request.await);
        });
        match rx.recv() {
            Ok(answer) => answer.map_err(|e| anyhow!(one_line(&e.to_string()))),
            Err(_) => Err(anyhow!("an object store request was abandoned")),
        }
    }
}

/// A server's error in one line: S3 answers errors as an XML document, of which its `Code`
/// and `Message` are what a person needs (`NoSuchBucket: The specified bucket does not
/// exist`); everything else is joined into one line.
fn one_line(text: &str) -> String {
    let element = |name: &str| {
        let open = format!("<{name}>");
        let start = text.find(&open)? + open.len();
        let end = start + text[start..].find(&format!("</{name}>"))?;
        Some(text[start..end].to_string())
    };
    let text = match (text.find("<?xml"), element("Code"), element("Message")) {
        (Some(xml), Some(code), Some(message)) => format!("{}{code}: {message}", &text[..xml]),
        _ => text.to_string(),
    };
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Drop for Waiter {
    /// Shuts the runtime down without waiting (dropping it inside another runtime's task would
    /// otherwise panic).
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn server_errors_are_one_line() {
        let answer = "Error performing GET http://x/b: 404 Not Found: <?xml version=\"1.0\"?>\n<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message><RequestId>1</RequestId></Error>";
        assert_eq!(
            one_line(answer),
            "Error performing GET http://x/b: 404 Not Found: NoSuchBucket: The specified bucket does not exist"
        );
        assert_eq!(one_line("a\n  b"), "a b");
    }
}
