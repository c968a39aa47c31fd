//! Resource links as `magnum/api/controllers/link.py` builds them.
//!
//! `<application_url>` is the request's `host_url` (`RequestInfo::host_url`, which already
//! honours the proxy headers when configured); Magnum adds `SCRIPT_NAME`, which is empty for
//! OpenKeel's listener.

use openkeel_core::pyjson::write_str;
use serde_json::{json, Value};

/// `link.build_url(resource, resource_args, bookmark, base_url)`:
/// `<base>/v1/<resource>/<args>` (bookmark: without `/v1`); `args` starting with `?` are
/// appended without the slash.
pub fn build_url(base_url: &str, resource: &str, resource_args: &str, bookmark: bool) -> String {
    let mut url = String::with_capacity(base_url.len() + resource.len() + resource_args.len() + 5);
    url.push_str(base_url);
    if !bookmark {
        url.push_str("/v1");
    }
    url.push('/');
    url.push_str(resource);
    if !resource_args.starts_with('?') {
        url.push('/');
    }
    url.push_str(resource_args);
    url
}

/// `Link.make_link(rel, url, resource, args, bookmark)` as the JSON object WSME prints
/// (`{"href": ..., "rel": ...}`; `type` is never set for resource links).
pub fn make_link(rel: &str, base_url: &str, resource: &str, args: &str, bookmark: bool) -> Value {
    json!({"href": build_url(base_url, resource, args, bookmark), "rel": rel})
}

/// The `links` list of a top-level resource: its `self` link then its `bookmark` link, e.g.
/// `self_and_bookmark(host, "clustertemplates", uuid)` or
/// `self_and_bookmark(host, "clusters", &format!("{cluster}/nodegroups/{ng}"))`.
pub fn self_and_bookmark(base_url: &str, resource: &str, args: &str) -> Value {
    json!([
        make_link("self", base_url, resource, args, false),
        make_link("bookmark", base_url, resource, args, true),
    ])
}

/// [`self_and_bookmark`] appended to `out` as `json.dumps` text, without building it.
pub fn write_self_and_bookmark(out: &mut String, base_url: &str, resource: &str, args: &str) {
    out.push('[');
    for (rel, bookmark) in [("self", false), ("bookmark", true)] {
        if bookmark {
            out.push_str(", ");
        }
        out.push_str("{\"href\": ");
        write_str(out, &build_url(base_url, resource, args, bookmark));
        out.push_str(", \"rel\": ");
        write_str(out, rel);
        out.push('}');
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;
    use openkeel_core::pyjson::dumps;

    #[test]
    fn self_and_bookmark_links() {
        assert_eq!(
            dumps(&self_and_bookmark(
                "http://h:9511",
                "clustertemplates",
                "u-1"
            )),
            r#"[{"href": "http://h:9511/v1/clustertemplates/u-1", "rel": "self"}, {"href": "http://h:9511/clustertemplates/u-1", "rel": "bookmark"}]"#
        );
    }

    #[test]
    fn written_links_are_the_dumped_ones() {
        for (host, args) in [
            ("http://h:9511", "u-1"),
            ("https://é.example/magnum", "c/nodegroups/\"x\"\\"),
            ("", ""),
        ] {
            let mut out = String::new();
            write_self_and_bookmark(&mut out, host, "clusters", args);
            assert_eq!(out, dumps(&self_and_bookmark(host, "clusters", args)));
        }
    }

    #[test]
    fn query_args_have_no_slash() {
        assert_eq!(
            build_url("http://h", "clusters", "?limit=1", false),
            "http://h/v1/clusters?limit=1"
        );
        assert_eq!(
            build_url("http://h", "clustertemplates", "", true),
            "http://h/clustertemplates/"
        );
    }
}
