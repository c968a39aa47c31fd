//! Policy targets: Magnum passes `obj.as_dict()` (every field of the object) as the target of
//! a check; the rules read only the keys they substitute (`%(project_id)s`), so OpenKeel
//! builds just those when the enforcer names them ([`openkeel_auth::Enforcer::enforce_on`]).

use serde::ser::{self, Impossible, Serialize, SerializeStruct, Serializer};
use serde_json::{Map, Value};

/// `serde_json::to_value(obj)` (the object's `as_dict()`) with only the fields named in
/// `keys` when given; the whole object for `None`, or when `obj` is not a struct.
pub fn of<T: Serialize>(obj: &T, keys: Option<&[String]>) -> Value {
    let whole = || serde_json::to_value(obj).unwrap_or(Value::Null);
    match keys {
        None => whole(),
        Some(keys) => obj.serialize(Fields { keys }).unwrap_or_else(|_| whole()),
    }
}

/// A serializer of a struct that keeps the fields named in `keys`, in the struct's order.
struct Fields<'k> {
    keys: &'k [String],
}

struct Picked<'k> {
    keys: &'k [String],
    map: Map<String, Value>,
}

impl SerializeStruct for Picked<'_> {
    type Ok = Value;
    type Error = serde_json::Error;

    fn serialize_field<V: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &V,
    ) -> Result<(), Self::Error> {
        if self.keys.iter().any(|k| k == key) {
            self.map
                .insert(key.to_string(), serde_json::to_value(value)?);
        }
        Ok(())
    }

    fn end(self) -> Result<Value, Self::Error> {
        Ok(Value::Object(self.map))
    }
}

fn not_a_struct() -> serde_json::Error {
    ser::Error::custom("not a struct")
}

/// Everything but a struct: refused, and [`of`] serializes the whole value instead.
macro_rules! refuse {
    ($($method:ident($($arg:ty),*);)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<Value, serde_json::Error> {
            Err(not_a_struct())
        })*
    };
}

impl<'k> Serializer for Fields<'k> {
    type Ok = Value;
    type Error = serde_json::Error;
    type SerializeSeq = Impossible<Value, serde_json::Error>;
    type SerializeTuple = Impossible<Value, serde_json::Error>;
    type SerializeTupleStruct = Impossible<Value, serde_json::Error>;
    type SerializeTupleVariant = Impossible<Value, serde_json::Error>;
    type SerializeMap = Impossible<Value, serde_json::Error>;
    type SerializeStruct = Picked<'k>;
    type SerializeStructVariant = Impossible<Value, serde_json::Error>;

    fn serialize_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Picked<'k>, serde_json::Error> {
        Ok(Picked {
            keys: self.keys,
            map: Map::with_capacity(len.min(self.keys.len())),
        })
    }

    refuse! {
        serialize_bool(bool);
        serialize_i8(i8);
        serialize_i16(i16);
        serialize_i32(i32);
        serialize_i64(i64);
        serialize_u8(u8);
        serialize_u16(u16);
        serialize_u32(u32);
        serialize_u64(u64);
        serialize_f32(f32);
        serialize_f64(f64);
        serialize_char(char);
        serialize_str(&str);
        serialize_bytes(&[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(&'static str);
        serialize_unit_variant(&'static str, u32, &'static str);
    }

    fn serialize_some<V: Serialize + ?Sized>(self, _: &V) -> Result<Value, serde_json::Error> {
        Err(not_a_struct())
    }

    fn serialize_newtype_struct<V: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &V,
    ) -> Result<Value, serde_json::Error> {
        Err(not_a_struct())
    }

    fn serialize_newtype_variant<V: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &V,
    ) -> Result<Value, serde_json::Error> {
        Err(not_a_struct())
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, serde_json::Error> {
        Err(not_a_struct())
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, serde_json::Error> {
        Err(not_a_struct())
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, serde_json::Error> {
        Err(not_a_struct())
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, serde_json::Error> {
        Err(not_a_struct())
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, serde_json::Error> {
        Err(not_a_struct())
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, serde_json::Error> {
        Err(not_a_struct())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use openkeel_core::objects::{Cluster, ClusterStatus, ClusterTemplate, Federation};

    /// The picked target is the whole one with the other keys left out, for each kind of
    /// object a handler checks (a missing key stays missing: `KeyError` in both).
    #[test]
    fn a_picked_target_is_the_whole_one_restricted_to_the_keys() {
        fn check<T: Serialize>(obj: &T) {
            let whole = serde_json::to_value(obj).unwrap_or(Value::Null);
            let keys: Vec<String> = ["project_id", "user_id", "name", "status", "nope"]
                .iter()
                .map(|k| k.to_string())
                .collect();
            let mut expected = whole.as_object().cloned().unwrap_or_default();
            expected.retain(|k, _| keys.contains(k));
            assert_eq!(of(obj, Some(&keys)), Value::Object(expected));
            assert_eq!(of(obj, Some(&[])), Value::Object(Map::new()));
            assert_eq!(of(obj, None), whole);
        }
        check(&Cluster {
            name: Some("c1".into()),
            project_id: Some("p1".into()),
            status: Some(ClusterStatus::CreateComplete),
            ..Cluster::default()
        });
        check(&Cluster::default());
        check(&ClusterTemplate {
            name: Some("t".into()),
            ..ClusterTemplate::default()
        });
        check(&Federation::default());
    }

    #[test]
    fn what_is_not_a_struct_is_given_whole() {
        let keys = vec!["a".to_string()];
        assert_eq!(of(&"text", Some(&keys)), Value::String("text".into()));
        assert_eq!(
            of(&serde_json::json!({"a": 1, "b": 2}), Some(&keys)),
            serde_json::json!({"a": 1, "b": 2})
        );
    }
}
