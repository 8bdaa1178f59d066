//! A real S3-compatible server for tests: moto's (PyPI `moto[server]`), on a free loopback
//! port. The tests of this crate and the end-to-end tests of `retro` use it; it is installed
//! with pip when missing, and a test that cannot get it fails naming it (never passes
//! silently).

use crate::{ObjectStorage, StorageUrl};
use object_store::aws::AmazonS3Builder;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, PutOptions, PutPayload};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A moto S3 server on a free loopback port, stopped when dropped.
pub struct Moto {
    child: Child,
    /// The server's port on 127.0.0.1.
    pub port: u16,
}

impl Moto {
    /// Starts a server (installing moto first if needed); panics, naming what is missing,
    /// if it cannot.
    pub fn start() -> Moto {
        if !python_has_moto() {
            let installed = Command::new("python3")
                .args(["-m", "pip", "install", "--quiet", "moto[server]"])
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
            assert!(
                installed && python_has_moto(),
                "the S3 tests need moto's server (python3 -m pip install 'moto[server]'), and it could not be installed"
            );
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("python3")
            .args([
                "-m",
                "moto.server",
                "-H",
                "127.0.0.1",
                "-p",
                &port.to_string(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 runs");
        let moto = Moto { child, port };
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "moto's server did not start"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        moto
    }

    /// The server's URL.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Creates `bucket` (moto accepts an unsigned request).
    pub fn create_bucket(&self, bucket: &str) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            stream,
            "PUT /{bucket} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            self.port
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }

    /// The environment an S3 client needs to reach this server.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT", self.endpoint()),
            ("AWS_ALLOW_HTTP", "true".into()),
            ("AWS_ACCESS_KEY_ID", "test".into()),
            ("AWS_SECRET_ACCESS_KEY", "test".into()),
            ("AWS_DEFAULT_REGION", "us-east-1".into()),
        ]
    }

    /// A raw client of `bucket`, to look at and tamper with objects behind the storage's back.
    pub fn client(&self, bucket: &str) -> Arc<dyn ObjectStore> {
        Arc::new(
            AmazonS3Builder::new()
                .with_bucket_name(bucket)
                .with_endpoint(self.endpoint())
                .with_allow_http(true)
                .with_access_key_id("test")
                .with_secret_access_key("test")
                .with_region("us-east-1")
                .build()
                .unwrap(),
        )
    }

    /// Storage of the job at `s3://bucket/prefix`, caching in a fresh directory.
    pub fn storage(&self, bucket: &str, prefix: &str, cache: &std::path::Path) -> ObjectStorage {
        self.create_bucket(bucket);
        let url = StorageUrl::parse(&format!("s3://{bucket}/{prefix}")).unwrap();
        ObjectStorage::with_store(self.client(bucket), url, cache.to_path_buf(), 1 << 30).unwrap()
    }

    /// Lets the object `key` of `bucket` rot: one bit flipped in the middle of its bytes, its
    /// recorded checksum left as it was (what a damaged disk behind the bucket would do).
    pub fn flip_bit(&self, bucket: &str, key: &str) {
        let client = self.client(bucket);
        let path = ObjectPath::from(key);
        block_on(async {
            let got = client.get(&path).await.expect("the object exists");
            let attributes = got.attributes.clone();
            let mut bytes = got.bytes().await.expect("the object reads").to_vec();
            let middle = bytes.len() / 2;
            bytes[middle] ^= 0x10;
            let options = PutOptions {
                attributes,
                ..Default::default()
            };
            client
                .put_opts(&path, PutPayload::from(bytes), options)
                .await
                .expect("the object is written back");
        });
    }
}

impl Drop for Moto {
    /// Stops the server.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn python_has_moto() -> bool {
    Command::new("python3")
        .args(["-c", "import moto.server"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Runs `future` on a runtime of its own (the tests call this from plain threads).
pub fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(future)
}
