//! Reading the fields of one tokenizer.json component, each error naming its JSON path.

use crate::error::{Error, Result};
use serde_json::{Map, Value};

pub struct Fields<'a> {
    obj: &'a Map<String, Value>,
    path: &'a str,
}

impl<'a> Fields<'a> {
    /// The fields of `v` (a component at `path`, a `what`) and its `"type"`.
    pub fn of(v: &'a Value, path: &'a str, what: &str) -> Result<(Self, &'a str)> {
        let obj = v
            .as_object()
            .ok_or_else(|| Error::invalid(format!("{path}: a {what} must be a JSON object")))?;
        let kind = obj
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::invalid(format!("{path}: a {what} needs a \"type\" string")))?;
        Ok((Fields { obj, path }, kind))
    }

    /// The fields of an object that has no `"type"` (an added token, padding …).
    pub fn object(obj: &'a Map<String, Value>, path: &'a str) -> Self {
        Fields { obj, path }
    }

    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.obj.get(key)
    }

    /// `path.key`, for messages.
    pub fn at(&self, key: &str) -> String {
        format!("{}.{key}", self.path)
    }

    pub fn flag(&self, key: &str, default: bool) -> Result<bool> {
        match self.obj.get(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(Error::invalid(format!(
                "{}: expected true or false, got {other}",
                self.at(key)
            ))),
        }
    }

    /// A string field, `default` when absent (`None`: required).
    pub fn text(&self, key: &str, default: Option<&str>) -> Result<String> {
        match (self.obj.get(key), default) {
            (Some(Value::String(s)), _) => Ok(s.clone()),
            (None, Some(d)) => Ok(d.to_string()),
            (None, None) => Err(Error::invalid(format!(
                "{}: \"{key}\" is required",
                self.path
            ))),
            (Some(other), _) => Err(Error::invalid(format!(
                "{}: expected a string, got {other}",
                self.at(key)
            ))),
        }
    }

    pub fn one_char(&self, key: &str, default: &str) -> Result<char> {
        let s = self.text(key, Some(default))?;
        let mut chars = s.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => Ok(c),
            _ => Err(Error::invalid(format!(
                "{}: expected a string of length 1, got {s:?}",
                self.at(key)
            ))),
        }
    }

    pub fn count(&self, key: &str, default: usize) -> Result<usize> {
        match self.obj.get(key) {
            None => Ok(default),
            Some(v) => v.as_u64().map(|n| n as usize).ok_or_else(|| {
                Error::invalid(format!("{}: expected a count, got {v}", self.at(key)))
            }),
        }
    }

    /// A `[token, id]` field (BertProcessing's and RobertaProcessing's `cls` and `sep`).
    pub fn token_and_id(&self, key: &str) -> Result<(String, u32)> {
        match self
            .obj
            .get(key)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
        {
            Some([Value::String(s), Value::Number(n)]) => match n.as_u64() {
                Some(id) if id <= u32::MAX as u64 => Ok((s.clone(), id as u32)),
                _ => Err(Error::invalid(format!(
                    "{}: the id must be an integer in 0..2**32, got {n}",
                    self.at(key)
                ))),
            },
            _ => Err(Error::invalid(format!(
                "{}: expected [token, id]",
                self.at(key)
            ))),
        }
    }

    /// A list field's items, each with its path.
    pub fn list(&self, key: &str) -> Result<Vec<(&'a Value, String)>> {
        let items =
            self.obj.get(key).and_then(Value::as_array).ok_or_else(|| {
                Error::invalid(format!("{}: \"{key}\" must be a list", self.path))
            })?;
        Ok(items
            .iter()
            .enumerate()
            .map(|(k, v)| (v, format!("{}.{key}[{k}]", self.path)))
            .collect())
    }
}
