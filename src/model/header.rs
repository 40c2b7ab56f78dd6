//! The session header: line 1 of a session file (SPEC §1).

use super::serde_util::{present, to_json};
use super::tag;
use super::JsonObject;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The session header, line 1 of a session file:
/// `{type: "session", version?, id, timestamp, cwd, title?, parentSession?}`.
///
/// `version` is 3 for the current format and absent in v1 files (SPEC §1 "Older files"). Only
/// `type` and `id` are required to read a header (as `loadSession` does); `timestamp` and `cwd`,
/// always written by the agents, are optional here so that any header round-trips. Fields of older formats (`provider`, `modelId`, `thinkingLevel`,
/// `branchedFrom`) and anything else are kept in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
#[serde(rename_all = "camelCase")]
pub struct SessionHeader {
    /// Always `"session"`.
    #[serde(rename = "type")]
    #[cfg_attr(feature = "tsify", tsify(type = "\"session\""))]
    pub kind: tag::Session,
    /// Format version: 3 (absent in v1 files; loading migrates to 3).
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub version: Option<u32>,
    /// The session id (a UUID).
    pub id: String,
    /// When the session was created: an ISO-8601 string.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub timestamp: Option<String>,
    /// The working directory of the session.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub cwd: Option<String>,
    /// The session title, when set.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub title: Option<String>,
    /// Path of the session file this one was forked from.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub parent_session: Option<String>,
    /// Fields this model does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl SessionHeader {
    /// The current version (3).
    pub const CURRENT_VERSION: u32 = 3;

    /// A v3 header.
    pub fn new(id: impl Into<String>, timestamp: impl Into<String>, cwd: impl Into<String>) -> Self {
        Self {
            version: Some(Self::CURRENT_VERSION),
            id: id.into(),
            timestamp: Some(timestamp.into()),
            cwd: Some(cwd.into()),
            ..Self::default()
        }
    }

    /// Parses a header. Fails ([`Error::Header`]) when `value` is not an object with
    /// `type: "session"` and a string `id`, or when a known field has the wrong JSON type.
    pub fn from_value(value: &Value) -> Result<Self> {
        Self::deserialize(value).map_err(|e| Error::Header { reason: e.to_string() })
    }

    /// True when `value` looks like a header (`type: "session"`), without checking the rest.
    pub fn is_header(value: &Value) -> bool {
        value.get("type").and_then(Value::as_str) == Some(tag::Session::VALUE)
    }

    /// The header as JSON.
    pub fn to_value(&self) -> Value {
        to_json(self)
    }

    /// The format version (`version`, 1 when absent).
    pub fn format_version(&self) -> u32 {
        self.version.unwrap_or(1)
    }
}
