//! Where a job's objects are: `s3://bucket/prefix`.

use anyhow::{bail, Result};
use object_store::path::Path as ObjectPath;
use std::fmt;

/// A bucket and a prefix inside it, parsed from `s3://bucket/prefix` (the prefix may be
/// empty or have several parts).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StorageUrl {
    /// The bucket's name.
    pub bucket: String,
    /// The prefix, without leading or trailing `/`.
    pub prefix: String,
}

impl StorageUrl {
    /// Parses `s3://bucket/prefix`; anything else is an error saying what is expected.
    pub fn parse(text: &str) -> Result<StorageUrl> {
        let Some(rest) = text.trim().strip_prefix("s3://") else {
            bail!("'{text}' is not an object store location: write s3://bucket/prefix");
        };
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let valid_bucket = (3..=63).contains(&bucket.len())
            && bucket
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.');
        if !valid_bucket {
            bail!("'{text}': '{bucket}' is not a bucket name (3 to 63 lowercase letters, digits, '-' or '.')");
        }
        let prefix = prefix.trim_matches('/');
        if prefix.split('/').any(|part| part == "." || part == "..") || prefix.contains("//") {
            bail!("'{text}': the prefix must be plain path parts");
        }
        Ok(StorageUrl {
            bucket: bucket.to_string(),
            prefix: prefix.to_string(),
        })
    }

    /// The object path of the job-relative `key`.
    pub fn object(&self, key: &str) -> ObjectPath {
        if self.prefix.is_empty() {
            ObjectPath::from(key)
        } else {
            ObjectPath::from(format!("{}/{key}", self.prefix))
        }
    }
}

impl fmt::Display for StorageUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.prefix.is_empty() {
            write!(f, "s3://{}", self.bucket)
        } else {
            write!(f, "s3://{}/{}", self.bucket, self.prefix)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_are_parsed_and_bad_ones_refused() {
        let url = StorageUrl::parse("s3://retro-jobs/board33/run1/").unwrap();
        assert_eq!(url.bucket, "retro-jobs");
        assert_eq!(url.prefix, "board33/run1");
        assert_eq!(url.to_string(), "s3://retro-jobs/board33/run1");
        assert_eq!(
            url.object("shards/a.tbl").as_ref(),
            "board33/run1/shards/a.tbl"
        );
        let bare = StorageUrl::parse("s3://bucket").unwrap();
        assert_eq!(bare.object("a.tbl").as_ref(), "a.tbl");
        for bad in [
            "/data",
            "s3://",
            "s3://B",
            "s3://ab",
            "s3://bucket/../x",
            "s3://bucket/a//b",
        ] {
            assert!(StorageUrl::parse(bad).is_err(), "{bad}");
        }
    }
}
