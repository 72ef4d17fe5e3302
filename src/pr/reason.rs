//! A reason: a named fact of `checks/reasons.toml` with the values of its placeholders. The PR
//! model names what it could not read with one; the checks pass them into their messages.

/// The key of a JSON object that is a reason of `checks/reasons.toml` (its kind); the object's
/// other fields are the reason's arguments. A message prints it, rendered in the row's language.
pub const REASON_KEY: &str = "$reason";

/// A reason of `checks/reasons.toml` passed into a message as a value (decision ZH1): a kind and
/// the values of its placeholders, never an English sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct Reason(serde_json::Map<String, serde_json::Value>);

/// The reason `kind` (`checks/reasons.toml`), without arguments yet.
pub fn reason(kind: &str) -> Reason {
    let mut fields = serde_json::Map::new();
    fields.insert(REASON_KEY.to_owned(), kind.into());
    Reason(fields)
}

impl Reason {
    /// The kind and the placeholder values, as the catalog renders them.
    pub fn fields(&self) -> &serde_json::Map<String, serde_json::Value> {
        &self.0
    }

    /// Sets a placeholder value (a string, number, list or another reason).
    pub fn arg(mut self, name: &str, value: impl Into<serde_json::Value>) -> Reason {
        self.0.insert(name.to_owned(), value.into());
        self
    }

    /// Sets `error`: a lower layer's or the evidence's own error text, which the catalog quotes
    /// as code inside a sentence of its own; without its closing period (the sentence has one).
    pub fn error(self, error: impl std::fmt::Display) -> Reason {
        let text = error.to_string();
        let text = text.trim_end();
        self.arg("error", text.strip_suffix('.').unwrap_or(text))
    }
}

/// A text from outside the catalog (a lower layer's error, the evidence's own reason): quoted as
/// code inside a sentence of the catalog's (`quoted` in checks/reasons.toml).
impl From<String> for Reason {
    fn from(text: String) -> Reason {
        reason("quoted").error(text)
    }
}

impl From<&str> for Reason {
    fn from(text: &str) -> Reason {
        reason("quoted").error(text)
    }
}

impl From<Reason> for serde_json::Value {
    fn from(reason: Reason) -> serde_json::Value {
        serde_json::Value::Object(reason.0)
    }
}
