//! Job storage in an S3-compatible object store: the second implementation of
//! [`retro_pipeline::Storage`], beside the job directory on a (shared) filesystem.
//!
//! A cluster without a shared filesystem keeps its shards and final tables in a bucket, under a
//! prefix per job (`s3://bucket/jobs/board33/shards/...`). Three properties carry over from
//! the directory:
//!
//! * **Atomic publication.** An object appears under its key only when its upload is complete:
//!   a single `PUT` is atomic in S3, and a multipart upload ([`MULTIPART_ABOVE`] bytes and
//!   more) becomes visible only when it is completed. A worker killed mid-upload leaves no
//!   object (the parts of an abandoned multipart upload are invisible, and removed by the
//!   bucket's lifecycle rules).
//! * **Checksums.** Every object carries the XXH3 of its bytes as user metadata
//!   ([`CHECKSUM_METADATA`]), written with it; every download is checked against it, and a
//!   mismatch is an error naming the object (`s3://bucket/prefix/key: damaged ...`), never
//!   silently used.
//! * **Local reads.** Tables are memory-mapped by the kernel, so [`Storage::open_table`]
//!   downloads a table once into a bounded local cache ([`cache::TableCache`]) and opens the
//!   copy. Objects are immutable once published and a cached copy is named by its checksum, so
//!   the cache needs no invalidation: a key written again with other bytes is a new file.
//!
//! `object_store` is asynchronous; [`Storage`] is called from worker threads and blocking
//! code, so each [`ObjectStorage`] owns a small runtime and waits for its requests there.

#![warn(missing_docs)]

pub mod cache;
pub mod opener;
mod runtime;
pub mod test_server;
pub mod url;

use anyhow::{anyhow, bail, Context, Result};
use cache::TableCache;
use futures::TryStreamExt;
use object_store::path::Path as ObjectPath;
use object_store::{
    Attribute, AttributeValue, Attributes, ObjectStore, PutMultipartOptions, PutOptions,
    PutPayload, WriteMultipart,
};
use retro_pipeline::storage::check_key;
use retro_pipeline::Storage;
use runtime::Waiter;
use std::path::PathBuf;
use std::sync::Arc;

pub use opener::{check_location, default_cache_dir, Opener, DEFAULT_CACHE_BYTES};
pub use url::StorageUrl;

/// The user metadata key holding an object's XXH3 checksum (hexadecimal), as S3 stores it:
/// `x-amz-meta-retro-xxh3`.
pub const CHECKSUM_METADATA: &str = "retro-xxh3";

/// Objects of at least this many bytes are uploaded in parts (S3 refuses single `PUT`s above
/// 5 GiB; parts also let a large upload proceed without one long request).
pub const MULTIPART_ABOVE: usize = 64 << 20;

/// Size of one part of a multipart upload (S3 wants at least 5 MiB but the last).
const PART_SIZE: usize = 16 << 20;

/// A job's storage in an object store: keys are the job directory's relative paths under the
/// store's prefix.
pub struct ObjectStorage {
    store: Arc<dyn ObjectStore>,
    location: StorageUrl,
    cache: TableCache,
    waiter: Waiter,
}

impl ObjectStorage {
    /// Storage at `url` (`s3://bucket/prefix`), with credentials, region and endpoint from the
    /// usual environment variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
    /// `AWS_DEFAULT_REGION`, `AWS_ENDPOINT` for S3-compatible servers, `AWS_ALLOW_HTTP=true`
    /// for a plain-HTTP endpoint), caching tables read in `cache_dir` up to `cache_bytes`.
    pub fn from_env(url: &str, cache_dir: PathBuf, cache_bytes: u64) -> Result<ObjectStorage> {
        let location = StorageUrl::parse(url)?;
        let store = object_store::aws::AmazonS3Builder::from_env()
            .with_bucket_name(&location.bucket)
            .build()
            .with_context(|| format!("cannot use {location}"))?;
        ObjectStorage::with_store(Arc::new(store), location, cache_dir, cache_bytes)
    }

    /// Storage in `store` (any `object_store` implementation: tests use an S3 server or
    /// memory) at `location`.
    pub fn with_store(
        store: Arc<dyn ObjectStore>,
        location: StorageUrl,
        cache_dir: PathBuf,
        cache_bytes: u64,
    ) -> Result<ObjectStorage> {
        Ok(ObjectStorage {
            store,
            location,
            cache: TableCache::new(cache_dir, cache_bytes)?,
            waiter: Waiter::new()?,
        })
    }

    /// Where this storage is, e.g. `s3://bucket/prefix`.
    pub fn location(&self) -> &StorageUrl {
        &self.location
    }

    /// The local table cache.
    pub fn cache(&self) -> &TableCache {
        &self.cache
    }

    /// The object path of `key`, checked to stay inside the job's prefix.
    fn path(&self, key: &str) -> Result<ObjectPath> {
        check_key(key)?;
        Ok(self.location.object(key))
    }

    /// Downloads the object at `key` in full and checks it against its checksum metadata:
    /// its bytes, or an error naming the object.
    fn download(&self, key: &str) -> Result<(Vec<u8>, u64)> {
        let path = self.path(key)?;
        let store = self.store.clone();
        let (bytes, attributes) = self
            .waiter
            .wait(async move {
                let got = store.get(&path).await?;
                let attributes = got.attributes.clone();
                Ok::<_, object_store::Error>((got.bytes().await?, attributes))
            })
            .with_context(|| format!("cannot read {}", self.describe(key)))?;
        let sum = retro_store::checksum(&bytes);
        let recorded = attributes
            .get(&Attribute::Metadata(CHECKSUM_METADATA.into()))
            .map(|v| v.as_ref().to_string());
        match recorded {
            None => bail!(
                "{}: damaged (no {CHECKSUM_METADATA} checksum: not written by retro)",
                self.describe(key)
            ),
            Some(hex) if hex != format!("{sum:016x}") => bail!(
                "{}: damaged (checksum {sum:016x} of its {} bytes, {hex} recorded when it was written)",
                self.describe(key),
                bytes.len()
            ),
            Some(_) => Ok((bytes.to_vec(), sum)),
        }
    }

    /// The checksum recorded with the object at `key` (a request for its metadata only): an
    /// error if there is no such object or it carries no checksum.
    fn recorded_checksum(&self, key: &str) -> Result<String> {
        let path = self.path(key)?;
        let store = self.store.clone();
        let found = self.waiter.wait(async move {
            // `head` does not return user metadata; a `get` asking for the head only does.
            let options = object_store::GetOptions {
                head: true,
                ..Default::default()
            };
            match store.get_opts(&path, options).await {
                Ok(got) => Ok(Some(got.attributes)),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        });
        let attributes = found
            .with_context(|| format!("cannot read {}", self.describe(key)))?
            .ok_or_else(|| anyhow!("{}: no such object", self.describe(key)))?;
        match attributes.get(&Attribute::Metadata(CHECKSUM_METADATA.into())) {
            Some(hex) => Ok(hex.as_ref().to_string()),
            None => bail!(
                "{}: damaged (no {CHECKSUM_METADATA} checksum: not written by retro)",
                self.describe(key)
            ),
        }
    }

    /// Whether an object exists at `key`.
    pub fn exists(&self, key: &str) -> Result<bool> {
        let path = self.path(key)?;
        let store = self.store.clone();
        self.waiter
            .wait(async move {
                match store.head(&path).await {
                    Ok(_) => Ok(true),
                    Err(object_store::Error::NotFound { .. }) => Ok(false),
                    Err(e) => Err(e),
                }
            })
            .with_context(|| format!("cannot read {}", self.describe(key)))
    }
}

/// The attributes every object is written with: its checksum.
fn checksum_attributes(bytes: &[u8]) -> Attributes {
    let mut attributes = Attributes::new();
    attributes.insert(
        Attribute::Metadata(CHECKSUM_METADATA.into()),
        AttributeValue::from(format!("{:016x}", retro_store::checksum(bytes))),
    );
    attributes
}

impl Storage for ObjectStorage {
    fn put(&self, key: &str, bytes: &[u8]) -> Result<()> {
        let path = self.path(key)?;
        let store = self.store.clone();
        let attributes = checksum_attributes(bytes);
        let bytes = bytes.to_vec();
        self.waiter
            .wait(async move {
                if bytes.len() < MULTIPART_ABOVE {
                    let options = PutOptions {
                        attributes,
                        ..Default::default()
                    };
                    store
                        .put_opts(&path, PutPayload::from(bytes), options)
                        .await?;
                    return Ok(());
                }
                // Visible under `path` only when `finish` completes the upload.
                let options = PutMultipartOptions {
                    attributes,
                    ..Default::default()
                };
                let upload = store.put_multipart_opts(&path, options).await?;
                let mut writer = WriteMultipart::new_with_chunk_size(upload, PART_SIZE);
                for chunk in bytes.chunks(PART_SIZE) {
                    writer.wait_for_capacity(2).await?;
                    writer.write(chunk);
                }
                writer.finish().await?;
                Ok::<_, object_store::Error>(())
            })
            .with_context(|| format!("cannot write {}", self.describe(key)))
    }

    fn checksum(&self, key: &str) -> Result<(u64, u64)> {
        let (bytes, sum) = self.download(key)?;
        Ok((sum, bytes.len() as u64))
    }

    fn local_copy(&self, key: &str) -> Result<PathBuf> {
        let recorded = self.recorded_checksum(key)?;
        if let Some(path) = self.cache.lookup(key, &recorded)? {
            return Ok(path);
        }
        let (bytes, sum) = self.download(key)?;
        self.cache.insert(key, &format!("{sum:016x}"), &bytes)
    }

    fn children(&self, prefix: &str) -> Result<Vec<String>> {
        let path = match prefix {
            "" => ObjectPath::from(self.location.prefix.as_str()),
            _ => self.path(prefix)?,
        };
        let store = self.store.clone();
        let listed = self
            .waiter
            .wait(async move { store.list_with_delimiter(Some(&path)).await })
            .with_context(|| format!("cannot list {}", self.describe(prefix)))?;
        let mut names: Vec<String> = listed
            .common_prefixes
            .iter()
            .chain(listed.objects.iter().map(|o| &o.location))
            .filter_map(|p| p.filename().map(str::to_string))
            .collect();
        names.sort();
        names.dedup();
        Ok(names)
    }

    fn promote(&self, from: &str, to: &str) -> Result<()> {
        let (source, target) = (self.path(from)?, self.path(to)?);
        let store = self.store.clone();
        // A copy replaces the target atomically (with the source's metadata: its checksum);
        // the source is deleted only once the copy exists.
        self.waiter
            .wait(async move {
                store.copy(&source, &target).await?;
                store.delete(&source).await
            })
            .with_context(|| {
                format!(
                    "cannot move {} to {}",
                    self.describe(from),
                    self.describe(to)
                )
            })
    }

    fn remove_prefix(&self, prefix: &str) -> Result<()> {
        let path = self.path(prefix)?;
        let store = self.store.clone();
        self.waiter
            .wait(async move {
                let objects: Vec<_> = store.list(Some(&path)).try_collect().await?;
                for object in objects {
                    match store.delete(&object.location).await {
                        Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                        Err(e) => return Err(e),
                    }
                }
                Ok(())
            })
            .with_context(|| format!("cannot remove {}", self.describe(prefix)))
    }

    fn describe(&self, key: &str) -> String {
        format!("{}/{key}", self.location)
    }
}
