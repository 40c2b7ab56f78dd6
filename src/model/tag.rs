//! Zero-sized markers for the discriminator of each typed struct: the `type` of an entry or a
//! content block, the `role` of a message.
//!
//! A marker serializes as its literal string and deserializes only from exactly that string, so
//! a struct such as [`super::MessageEntry`] owns its `type` field (it is written back, and
//! deserializing a `MessageEntry` from an object of another type fails instead of capturing the
//! `type` key in `extra`). Build one with `Default::default()` or by its name (`tag::Message`).

use serde::de::{self, Deserialize, Deserializer, Unexpected, Visitor};
use serde::{Serialize, Serializer};
use std::fmt;

/// Accepts exactly one string.
struct Literal(&'static str);

impl Visitor<'_> for Literal {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "the string {:?}", self.0)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        if v == self.0 {
            Ok(())
        } else {
            Err(E::invalid_value(Unexpected::Str(v), &self))
        }
    }
}

macro_rules! literal_tags {
    ($($(#[$doc:meta])* $name:ident = $lit:literal;)*) => {$(
        $(#[$doc])*
        #[doc = concat!("\n\nOn the wire: the string `\"", $lit, "\"`.")]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
        pub struct $name;

        impl $name {
            /// The wire string of this marker.
            pub const VALUE: &'static str = $lit;
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($lit)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_str(Literal($lit)).map(|()| $name)
            }
        }
    )*};
}

literal_tags! {
    /// `type` of the session header (line 1).
    Session = "session";
    /// `type` of a [`super::MessageEntry`].
    Message = "message";
    /// `type` of a [`super::CompactionEntry`].
    Compaction = "compaction";
    /// `type` of a [`super::BranchSummaryEntry`].
    BranchSummary = "branch_summary";
    /// `type` of a [`super::CustomMessageEntry`].
    CustomMessage = "custom_message";
    /// `type` of a [`super::CustomEntry`], and `role` of a [`super::CustomMessage`] (both are the
    /// string `"custom"`).
    Custom = "custom";
    /// `type` of a [`super::LabelEntry`].
    Label = "label";
    /// `type` of a [`super::ModelChangeEntry`].
    ModelChange = "model_change";
    /// `type` of a [`super::ThinkingLevelChangeEntry`].
    ThinkingLevelChange = "thinking_level_change";
    /// `type` of a [`super::ModeChangeEntry`].
    ModeChange = "mode_change";
    /// `type` of a [`super::TtsrInjectionEntry`].
    TtsrInjection = "ttsr_injection";
    /// `type` of a [`super::SessionInitEntry`].
    SessionInit = "session_init";

    /// `role` of a [`super::UserMessage`].
    User = "user";
    /// `role` of an [`super::AssistantMessage`].
    Assistant = "assistant";
    /// `role` of a [`super::ToolResultMessage`].
    ToolResult = "toolResult";
    /// `role` of a [`super::BashExecutionMessage`].
    BashExecution = "bashExecution";
    /// `role` of a [`super::HookMessage`] (the v2 name of `custom`).
    HookMessage = "hookMessage";
    /// `role` of a [`super::BranchSummaryMessage`].
    BranchSummaryRole = "branchSummary";
    /// `role` of a [`super::CompactionSummaryMessage`].
    CompactionSummary = "compactionSummary";
    /// `role` of a [`super::PythonExecutionMessage`].
    PythonExecution = "pythonExecution";
    /// `role` of a [`super::FileMentionMessage`].
    FileMention = "fileMention";

    /// `type` of a [`super::TextContent`] block.
    Text = "text";
    /// `type` of a [`super::ThinkingContent`] block.
    Thinking = "thinking";
    /// `type` of an [`super::ImageContent`] block.
    Image = "image";
    /// `type` of a [`super::ToolCall`] block.
    ToolCall = "toolCall";
}
