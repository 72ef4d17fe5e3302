//! A serde `Deserializer` over [`Node`], so domain types are plain `#[derive(Deserialize)]`
//! structs with `deny_unknown_fields`, and every error carries `line:col` and the field path.
//!
//! It is deliberately strict: a string is never read as a number, a number never as a string,
//! a boolean never from `"yes"` (docs/decisions.md, "Lax coercions").

use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};

use super::{Node, Value, YamlError};

/// Deserializes a typed value from a node. Errors point at the offending node.
pub fn from_node<T: DeserializeOwned>(node: &Node) -> Result<T, YamlError> {
    T::deserialize(NodeDe(node)).map_err(|e| locate(e, node, None))
}

impl de::Error for YamlError {
    fn custom<M: std::fmt::Display>(msg: M) -> Self {
        YamlError { file: None, pos: None, field: None, message: msg.to_string() }
    }
}

/// Attaches position (if still unknown) and prefixes the field path.
fn locate(mut err: YamlError, node: &Node, segment: Option<String>) -> YamlError {
    if err.pos.is_none() {
        err.pos = Some(node.pos);
    }
    if let Some(seg) = segment {
        err.field = Some(match err.field.take() {
            None => seg,
            Some(rest) if rest.starts_with('[') => format!("{seg}{rest}"),
            Some(rest) => format!("{seg}.{rest}"),
        });
    }
    err
}

#[derive(Clone, Copy)]
struct NodeDe<'a>(&'a Node);

impl<'a> NodeDe<'a> {
    fn mismatch(&self, expected: &str) -> YamlError {
        let found = match &self.0.value {
            Value::Str(s) => format!("the string {s:?}"),
            Value::Int(i) => format!("the integer {i}"),
            Value::Float(x) => format!("the float {x}"),
            Value::Bool(b) => format!("the boolean {b}"),
            other => other.kind().to_string(),
        };
        YamlError::at(self.0.pos, format!("expected {expected}, found {found}"))
    }
}

macro_rules! int_method {
    ($name:ident, $visit:ident, $ty:ty) => {
        fn $name<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, YamlError> {
            match self.0.value {
                Value::Int(i) => match <$ty>::try_from(i) {
                    Ok(v) => visitor.$visit(v),
                    Err(_) => {
                        Err(YamlError::at(self.0.pos, format!("integer {i} is out of range for {}", stringify!($ty))))
                    }
                },
                _ => Err(self.mismatch("an integer")),
            }
        }
    };
}

impl<'de, 'a> de::Deserializer<'de> for NodeDe<'a> {
    type Error = YamlError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, YamlError> {
        match &self.0.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Int(i) => visitor.visit_i64(*i),
            Value::Float(x) => visitor.visit_f64(*x),
            Value::Str(s) => visitor.visit_str(s),
            Value::Seq(items) => visitor.visit_seq(Seq { items: items.iter(), index: 0 }),
            Value::Map(entries) => visitor.visit_map(Map { entries: entries.iter(), pending: None }),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, YamlError> {
        match self.0.value {
            Value::Bool(b) => visitor.visit_bool(b),
            _ => Err(self.mismatch("a boolean (true or false)")),
        }
    }

    int_method!(deserialize_i8, visit_i8, i8);
    int_method!(deserialize_i16, visit_i16, i16);
    int_method!(deserialize_i32, visit_i32, i32);
    int_method!(deserialize_i64, visit_i64, i64);
    int_method!(deserialize_u8, visit_u8, u8);
    int_method!(deserialize_u16, visit_u16, u16);
    int_method!(deserialize_u32, visit_u32, u32);
    int_method!(deserialize_u64, visit_u64, u64);

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, YamlError> {
        self.deserialize_f64(visitor)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, YamlError> {
        match self.0.value {
            Value::Float(x) => visitor.visit_f64(x),
            Value::Int(i) => visitor.visit_f64(i as f64),
            _ => Err(self.mismatch("a number")),
        }
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, YamlError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, YamlError> {
        match &self.0.value {
            Value::Str(s) => visitor.visit_str(s),
            _ => Err(self.mismatch("a string")),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, YamlError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, YamlError> {
        Err(self.mismatch("bytes (unsupported)"))
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, YamlError> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, YamlError> {
        match self.0.value {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, YamlError> {
        match self.0.value {
            Value::Null => visitor.visit_unit(),
            _ => Err(self.mismatch("null")),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value, YamlError> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, YamlError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, YamlError> {
        match &self.0.value {
            Value::Seq(items) => visitor.visit_seq(Seq { items: items.iter(), index: 0 }),
            _ => Err(self.mismatch("a list")),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, YamlError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, YamlError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, YamlError> {
        match &self.0.value {
            Value::Map(entries) => visitor.visit_map(Map { entries: entries.iter(), pending: None }),
            _ => Err(self.mismatch("a mapping")),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, YamlError> {
        self.deserialize_map(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, YamlError> {
        match &self.0.value {
            Value::Str(s) => {
                visitor.visit_enum(s.as_str().into_deserializer()).map_err(|e: YamlError| locate(e, self.0, None))
            }
            Value::Map(entries) if entries.len() == 1 => {
                visitor.visit_enum(Enum { key: &entries[0].0, value: &entries[0].1 })
            }
            _ => Err(self.mismatch("a string naming a variant")),
        }
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, YamlError> {
        match self.0.key_text() {
            Some(text) => visitor.visit_str(&text),
            None => Err(self.mismatch("a scalar key")),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, YamlError> {
        visitor.visit_unit()
    }
}

struct Seq<'a> {
    items: std::slice::Iter<'a, Node>,
    index: usize,
}

impl<'de, 'a> SeqAccess<'de> for Seq<'a> {
    type Error = YamlError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, YamlError> {
        let Some(node) = self.items.next() else { return Ok(None) };
        let index = self.index;
        self.index += 1;
        seed.deserialize(NodeDe(node)).map(Some).map_err(|e| locate(e, node, Some(format!("[{index}]"))))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct Map<'a> {
    entries: std::slice::Iter<'a, (Node, Node)>,
    pending: Option<&'a (Node, Node)>,
}

impl<'de, 'a> MapAccess<'de> for Map<'a> {
    type Error = YamlError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, YamlError> {
        let Some(entry) = self.entries.next() else { return Ok(None) };
        self.pending = Some(entry);
        seed.deserialize(KeyDe(&entry.0)).map(Some).map_err(|e| locate(e, &entry.0, None))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, YamlError> {
        let Some((key, value)) = self.pending.take() else {
            return Err(de::Error::custom("value requested before key"));
        };
        let segment = key.key_text().map(|t| t.into_owned());
        seed.deserialize(NodeDe(value)).map_err(|e| locate(e, value, segment))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// Mapping keys: scalars read as their text (YAML `8192:` is a valid `String` key), so maps
/// keyed by numbers still deserialize into `String`-keyed maps; numeric key types work too.
#[derive(Clone, Copy)]
struct KeyDe<'a>(&'a Node);

impl<'de, 'a> de::Deserializer<'de> for KeyDe<'a> {
    type Error = YamlError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, YamlError> {
        match &self.0.value {
            Value::Seq(_) | Value::Map(_) => Err(NodeDe(self.0).mismatch("a scalar key")),
            _ => NodeDe(self.0).deserialize_any(visitor),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, YamlError> {
        NodeDe(self.0).deserialize_identifier(visitor)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, YamlError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, YamlError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, YamlError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, YamlError> {
        NodeDe(self.0).deserialize_enum(name, variants, visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char bytes byte_buf option unit
        unit_struct seq tuple tuple_struct map struct ignored_any
    }
}

struct Enum<'a> {
    key: &'a Node,
    value: &'a Node,
}

impl<'de, 'a> de::EnumAccess<'de> for Enum<'a> {
    type Error = YamlError;
    type Variant = NodeDe<'a>;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, NodeDe<'a>), YamlError> {
        let variant = seed.deserialize(KeyDe(self.key)).map_err(|e| locate(e, self.key, None))?;
        Ok((variant, NodeDe(self.value)))
    }
}

impl<'de, 'a> de::VariantAccess<'de> for NodeDe<'a> {
    type Error = YamlError;

    fn unit_variant(self) -> Result<(), YamlError> {
        de::Deserialize::deserialize(self)
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, YamlError> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, YamlError> {
        de::Deserializer::deserialize_seq(self, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, YamlError> {
        de::Deserializer::deserialize_map(self, visitor)
    }
}
