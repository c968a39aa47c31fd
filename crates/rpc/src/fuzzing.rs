//! Entry points of the fuzz targets (`fuzz/fuzz_targets/`) and of their stable replay
//! (`crates/api/tests/fuzz_corpus.rs`); see `openkeel_core::fuzzing`.

use crate::codec::{decode, encode, VersionedObject};
use crate::oslo::message::{
    context_from_dict, deserialize_envelope, failure_to_error, parse_reply, parse_request,
};
use openkeel_core::objects::{
    Certificate, Cluster, ClusterTemplate, Federation, MagnumService, NodeGroup, Quota, Stats,
    X509KeyPair,
};
use serde_json::Value;

/// An AMQP message body as a server or a reply consumer reads it: the oslo 2.0 envelope, then
/// the request (method, arguments, context) and the reply (result or remote failure).
pub fn oslo_message(data: &[u8]) {
    let Ok(m) = deserialize_envelope(data) else {
        return;
    };
    if let Ok(reply) = parse_reply(m.clone()) {
        if let Err(failure) = &reply.result {
            let _ = failure_to_error(failure).to_string();
        }
    }
    if let Ok(req) = parse_request(m) {
        let _ = context_from_dict(&req.context);
        for arg in req.args.values() {
            versioned_value(arg);
        }
    }
}

/// A JSON value as a versioned-object primitive (`magnum_object.*`) of every Magnum object
/// class; what decodes is encoded back.
pub fn versioned_object(data: &[u8]) {
    if let Ok(v) = serde_json::from_slice::<Value>(data) {
        versioned_value(&v);
    }
}

fn versioned_value(v: &Value) {
    round_trip::<Cluster>(v);
    round_trip::<ClusterTemplate>(v);
    round_trip::<NodeGroup>(v);
    round_trip::<X509KeyPair>(v);
    round_trip::<MagnumService>(v);
    round_trip::<Quota>(v);
    round_trip::<Federation>(v);
    round_trip::<Certificate>(v);
    round_trip::<Stats>(v);
}

fn round_trip<T: VersionedObject>(v: &Value) {
    if let Ok(obj) = decode::<T>(v) {
        let _ = encode(&obj);
    }
}
