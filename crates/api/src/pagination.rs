//! Magnum's list parameters (`marker`, `limit`, `sort_key`, `sort_dir`), the collection body
//! and its `next` link. The query's typing is [`crate::query`].
//!
//! How a list handler uses it:
//!
//! ```text
//! let args = query::parse_args(req, &pagination::LIST_ARGS)?;           // 400 typing / unknown
//! let list = pagination::ListParams::from_args(&args);
//! let limit = pagination::validate_limit(list.limit, settings.max_limit)?; // 400
//! pagination::validate_sort_dir(&list.sort_dir)?;                      // 400
//! // resolve list.marker to a row (404 when not visible), list from the DB (sort_key 400)
//! let next = pagination::next_link(&req.host_url, "clustertemplates",
//!     &list.next_args(), limit, items.len(), last_uuid);
//! Reply::ok(pagination::collection("clustertemplates", items, next))
//! ```

use crate::query::{ArgSpec, ArgType, Args};
use openkeel_core::error::MagnumError;
use serde_json::{Map, Value};

/// `[api] max_limit` default.
pub const DEFAULT_MAX_LIMIT: u64 = 1000;

/// `marker` (uuid), `limit` (int), `sort_key`, `sort_dir` — the arguments of every uuid-keyed
/// list route, in Magnum's declaration order.
pub const LIST_ARGS: [ArgSpec; 4] = [
    ArgSpec {
        name: "marker",
        ty: ArgType::Uuid,
    },
    ArgSpec {
        name: "limit",
        ty: ArgType::Int,
    },
    ArgSpec {
        name: "sort_key",
        ty: ArgType::Text,
    },
    ArgSpec {
        name: "sort_dir",
        ty: ArgType::Text,
    },
];

/// The list parameters with Magnum's defaults (`sort_key` `id`, `sort_dir` `asc`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListParams {
    pub marker: Option<String>,
    /// As given (validate with [`validate_limit`]).
    pub limit: Option<i128>,
    pub sort_key: String,
    pub sort_dir: String,
}

impl ListParams {
    pub fn from_args(args: &Args) -> ListParams {
        ListParams {
            // Magnum resolves the marker only when it is truthy (`if marker:`).
            marker: args
                .text("marker")
                .filter(|m| !m.is_empty())
                .map(str::to_string),
            limit: args.int("limit"),
            sort_key: args.text("sort_key").unwrap_or("id").to_string(),
            sort_dir: args.text("sort_dir").unwrap_or("asc").to_string(),
        }
    }

    /// The arguments Magnum echoes in `next` (`sort_key`, `sort_dir`, in that order).
    pub fn next_args(&self) -> [(&str, &str); 2] {
        [
            ("sort_key", self.sort_key.as_str()),
            ("sort_dir", self.sort_dir.as_str()),
        ]
    }
}

/// `api_utils.validate_limit`: ≤ 0 → 400 `Limit must be positive`; capped at `max_limit`;
/// absent → `max_limit`.
pub fn validate_limit(limit: Option<i128>, max_limit: u64) -> Result<u64, MagnumError> {
    match limit {
        None => Ok(max_limit),
        Some(l) if l <= 0 => Err(MagnumError::client_side("Limit must be positive")),
        Some(l) => Ok(u64::try_from(l).unwrap_or(u64::MAX).min(max_limit)),
    }
}

/// `api_utils.validate_sort_dir`: only `asc` / `desc`.
pub fn validate_sort_dir(sort_dir: &str) -> Result<(), MagnumError> {
    if sort_dir == "asc" || sort_dir == "desc" {
        Ok(())
    } else {
        Err(MagnumError::client_side(format!(
            "Invalid sort direction: {sort_dir}. Acceptable values are 'asc' or 'desc'"
        )))
    }
}

/// `Collection.get_next`: present only when the page holds exactly `limit` (non-zero) items:
/// `<base>/v1/<resource_url>?<k>=<v>&...&limit=<limit>&marker=<last marker>` (nothing is
/// URL-encoded, as in Magnum).
pub fn next_link(
    base_url: &str,
    resource_url: &str,
    args: &[(&str, &str)],
    limit: u64,
    count: usize,
    last_marker: &str,
) -> Option<String> {
    if count == 0 || count as u64 != limit {
        return None;
    }
    let mut q = String::from("?");
    for (k, v) in args {
        q.push_str(k);
        q.push('=');
        q.push_str(v);
        q.push('&');
    }
    q.push_str(&format!("limit={limit}&marker={last_marker}"));
    Some(crate::links::build_url(base_url, resource_url, &q, false))
}

/// [`collection`] written straight into `json.dumps` text, one item at a time: each item's
/// `Value` lives only while it is written, so a page of 1,000 clusters never exists as one
/// tree (peak memory per list is the rows plus the text). `items` yields each item's view.
pub struct CollectionWriter {
    out: String,
    count: usize,
}

impl CollectionWriter {
    /// `size_hint`: the expected body size in bytes (avoids regrowing the buffer).
    pub fn new(key: &str, size_hint: usize) -> Self {
        let mut out = String::with_capacity(size_hint.max(64));
        out.push('{');
        openkeel_core::pyjson::write_str(&mut out, key);
        out.push_str(": [");
        CollectionWriter { out, count: 0 }
    }

    pub fn push(&mut self, item: &Value) {
        self.push_with(|out| openkeel_core::pyjson::write_value(out, item));
    }

    /// An item `write` appends to the body as `json.dumps` text itself.
    pub fn push_with(&mut self, write: impl FnOnce(&mut String)) {
        if self.count > 0 {
            self.out.push_str(", ");
        }
        write(&mut self.out);
        self.count += 1;
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Close the document, with `next` as [`collection`] adds it.
    pub fn finish(mut self, next: Option<String>) -> String {
        self.out.push(']');
        if let Some(n) = next {
            self.out.push_str(", \"next\": ");
            openkeel_core::pyjson::write_str(&mut self.out, &n);
        }
        self.out.push('}');
        self.out.shrink_to_fit();
        self.out
    }
}

/// The collection body: `{"<key>": [items], "next": "<url>"}` (`next` only when given).
pub fn collection(key: &str, items: Vec<Value>, next: Option<String>) -> Value {
    let mut m = Map::new();
    m.insert(key.to_string(), Value::Array(items));
    if let Some(n) = next {
        m.insert("next".into(), Value::String(n));
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collection_writer_writes_what_collection_dumps() {
        let items = [
            serde_json::json!({"uuid": "a", "n": 1, "l": {"k": "v\u{e9}"}}),
            serde_json::json!({"uuid": "b", "n": null}),
        ];
        for next in [
            None,
            Some("http://h/v1/clusters?limit=2&marker=b".to_string()),
        ] {
            for n in 0..=items.len() {
                let mut w = CollectionWriter::new("clusters", 0);
                for it in &items[..n] {
                    w.push(it);
                }
                assert_eq!(w.len(), n);
                assert_eq!(
                    w.finish(next.clone()),
                    openkeel_core::pyjson::dumps(&collection(
                        "clusters",
                        items[..n].to_vec(),
                        next.clone()
                    ))
                );
            }
        }
    }

    #[test]
    fn limits_and_dirs() {
        assert_eq!(validate_limit(None, 1000), Ok(1000));
        assert_eq!(validate_limit(Some(99999999999999999999), 1000), Ok(1000));
        assert_eq!(
            validate_limit(Some(0), 1000).unwrap_err().message(),
            "Limit must be positive"
        );
        assert_eq!(
            validate_sort_dir("up").unwrap_err().message(),
            "Invalid sort direction: up. Acceptable values are 'asc' or 'desc'"
        );
        assert!(validate_sort_dir("asc").is_ok());
    }

    #[test]
    fn next_links() {
        let args = [("sort_key", "id"), ("sort_dir", "asc")];
        assert_eq!(
            next_link("http://h:1", "clustertemplates", &args, 1, 1, "u").as_deref(),
            Some("http://h:1/v1/clustertemplates?sort_key=id&sort_dir=asc&limit=1&marker=u")
        );
        assert_eq!(next_link("http://h:1", "x", &args, 2, 1, "u"), None);
        assert_eq!(next_link("http://h:1", "x", &args, 0, 0, "u"), None);
        assert_eq!(
            openkeel_core::pyjson::dumps(&collection("x", vec![], None)),
            r#"{"x": []}"#
        );
    }
}
