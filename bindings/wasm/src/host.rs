//! Adapters from JavaScript to the engine's host traits: the `complete` callback, the remote
//! summarizer endpoint (the runtime's `fetch`), hooks, clock, events and AbortSignal.
//! Conversions only.

use super::convert::{bad_arg, from_serde, to_value};
use js_sys::{Function, Promise, Reflect};
use serde_json::Value;
use session_compaction::error::{Error, Result};
use session_compaction::session::engine::{
    with_timeout, AbortSignal, Clock, EventSink, HooksByName, REMOTE_TIMEOUT_MS,
};
use session_compaction::session::events::AutoCompactionEvent;
use session_compaction::summarize::{Complete, SummaryRequest};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// `obj[key]` for objects and functions; `undefined` for anything else.
pub(crate) fn get(obj: &JsValue, key: &str) -> JsValue {
    if obj.is_object() || obj.is_function() {
        Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
    } else {
        JsValue::UNDEFINED
    }
}

/// The message of a thrown JS value (`Error.message`, or its string form).
pub fn js_message(v: &JsValue) -> String {
    if let Some(m) = get(v, "message").as_string() {
        return m;
    }
    v.as_string().unwrap_or_else(|| {
        js_sys::JSON::stringify(v).ok().and_then(|s| s.as_string()).unwrap_or_else(|| "unknown error".into())
    })
}

/// Awaits a value that may be a Promise (a plain value resolves at once).
pub async fn settle(v: JsValue) -> std::result::Result<JsValue, JsValue> {
    if super::safe::instance_of(&v, "Promise") == Ok(true) || get(&v, "then").is_function() {
        JsFuture::from(Promise::resolve(&v)).await
    } else {
        Ok(v)
    }
}

/// Header pairs of a JS `Headers` object or a plain object.
fn header_pairs(headers: &JsValue) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if headers.is_undefined() || headers.is_null() {
        return out;
    }
    let entries = get(headers, "entries");
    if entries.is_function() {
        if let Ok(iter) = entries.unchecked_ref::<Function>().call0(headers) {
            if let Ok(Some(it)) = js_sys::try_iter(&iter) {
                for pair in it.flatten() {
                    let arr: js_sys::Array = pair.unchecked_into();
                    if let (Some(k), Some(v)) = (arr.get(0).as_string(), arr.get(1).as_string()) {
                        out.push((session_compaction::js::lowercase(&k), v));
                    }
                }
            }
        }
        return out;
    }
    if let Ok(keys) = Reflect::own_keys(headers) {
        for k in keys.iter() {
            if let Some(name) = k.as_string() {
                let v = get(headers, &name);
                let v = v.as_string().or_else(|| v.as_f64().map(|n| n.to_string()));
                if let Some(v) = v {
                    out.push((session_compaction::js::lowercase(&name), v));
                }
            }
        }
    }
    out
}

/// A model failure from a rejected JS promise: message, `status`, and the retry wait from
/// `headers` / `retryAfterMs` when the host attached them to the error.
fn model_error(err: &JsValue) -> Error {
    let status =
        get(err, "status").as_f64().or_else(|| get(&get(err, "response"), "status").as_f64()).map(|s| s as u16);
    let mut headers = header_pairs(&get(err, "headers"));
    if headers.is_empty() {
        headers = header_pairs(&get(&get(err, "response"), "headers"));
    }
    let retry_after_ms = get(err, "retryAfterMs")
        .as_f64()
        .or_else(|| session_compaction::session::engine::retry_after_from_headers(&headers, js_sys::Date::now()));
    if get(err, "name").as_string().as_deref() == Some("AbortError") {
        return Error::Aborted { what: "Compaction".into() };
    }
    Error::Model { message: js_message(err), status, retry_after_ms }
}

/// The request object passed to `complete`.
fn request_js(request: &SummaryRequest, signal: &JsValue) -> std::result::Result<JsValue, JsValue> {
    let obj = from_serde(request)?;
    if !signal.is_undefined() {
        Reflect::set(&obj, &JsValue::from_str("signal"), signal)?;
    }
    Ok(obj)
}

/// The host's `complete(request) → Promise<string>` callback.
pub struct JsComplete {
    /// The callback.
    pub func: Function,
    /// The JS AbortSignal handed to the callback.
    pub signal: JsValue,
}

impl Complete for JsComplete {
    async fn complete(&self, request: SummaryRequest) -> Result<String> {
        let req = request_js(&request, &self.signal).map_err(|e| Error::Model {
            message: js_message(&e),
            status: None,
            retry_after_ms: None,
        })?;
        let returned = self.func.call1(&JsValue::UNDEFINED, &req).map_err(|e| model_error(&e))?;
        let value = settle(returned).await.map_err(|e| model_error(&e))?;
        value.as_string().ok_or_else(|| Error::Model {
            message: "complete() must resolve to a string".into(),
            status: None,
            retry_after_ms: None,
        })
    }
}

/// The remote summarizer over `fetch`: the protocol (body, reply) is
/// [`session_compaction::summarize::remote`] (SPEC §9); each request is bounded by
/// `timeout_ms` ([`with_timeout`], SPEC §13.5).
pub struct RemoteComplete {
    /// The endpoint URL.
    pub url: String,
    /// The JS AbortSignal of the operation: an abort also cancels the HTTP request in flight
    /// (otherwise it would run on, and keep a Node.js process alive until the server answers).
    pub signal: JsValue,
    /// Timeout of one request, ms (`remoteTimeoutMs`, default [`REMOTE_TIMEOUT_MS`]).
    pub timeout_ms: f64,
}

/// A per-request `AbortController` aborted when the request is given up (timeout, abort):
/// dropping the request future aborts the fetch. Aborting a finished fetch is a no-op.
struct AbortOnDrop(JsValue);

impl AbortOnDrop {
    /// A fresh controller that also aborts when `parent` (the operation's signal) does.
    fn linked(parent: &JsValue) -> Self {
        let controller = get(&js_sys::global(), "AbortController")
            .dyn_ref::<Function>()
            .and_then(|ctor| Reflect::construct(ctor, &js_sys::Array::new()).ok())
            .unwrap_or(JsValue::UNDEFINED);
        let this = Self(controller);
        if get(parent, "aborted").as_bool() == Some(true) {
            this.abort();
        } else if let Some(add) = get(parent, "addEventListener").dyn_ref::<Function>() {
            let c = this.0.clone();
            let cb = Closure::once_into_js(move || AbortOnDrop::abort_controller(&c));
            let _ = add.call2(parent, &JsValue::from_str("abort"), &cb);
        }
        this
    }
    fn abort_controller(c: &JsValue) {
        if let Some(f) = get(c, "abort").dyn_ref::<Function>() {
            let _ = f.call0(c);
        }
    }
    fn abort(&self) {
        Self::abort_controller(&self.0);
    }
    fn signal(&self) -> JsValue {
        get(&self.0, "signal")
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.abort();
    }
}

impl Complete for RemoteComplete {
    async fn complete(&self, request: SummaryRequest) -> Result<String> {
        with_timeout(&JsClock, self.timeout_ms, self.post(request)).await
    }
}

impl RemoteComplete {
    async fn post(&self, request: SummaryRequest) -> Result<String> {
        use session_compaction::summarize::remote::{redact_url, redact_url_in, request_body, summary_of_reply};
        let controller = AbortOnDrop::linked(&self.signal);
        // Messages name the endpoint without its credentials; a transport error's own text may
        // quote the URL, so its credentials are taken out of it too.
        let at = redact_url(&self.url);
        let failed = |what: &str, e: &JsValue| Error::Remote {
            status: 0,
            message: format!("{what} {at}: {}", redact_url_in(&fetch_failure(e), &self.url)),
        };
        let fetch = get(&js_sys::global(), "fetch")
            .dyn_into::<Function>()
            .map_err(|_| Error::Remote { status: 0, message: format!("this runtime has no `fetch` to reach {at}") })?;
        let headers = js_sys::Object::new();
        let init = js_sys::Object::new();
        let set = |o: &js_sys::Object, k: &str, v: &JsValue| {
            let _ = Reflect::set(o, &JsValue::from_str(k), v);
        };
        set(&headers, "content-type", &JsValue::from_str("application/json"));
        set(&init, "method", &JsValue::from_str("POST"));
        set(&init, "headers", &headers);
        set(&init, "body", &JsValue::from_str(&request_body(&request)));
        set(&init, "signal", &controller.signal());
        let sent = fetch
            .call2(&js_sys::global(), &JsValue::from_str(&self.url), &init)
            .map_err(|e| failed("cannot send the request to", &e))?;
        let resp = settle(sent).await.map_err(|e| failed("no answer from", &e))?;
        let status = get(&resp, "status").as_f64().unwrap_or(0.0) as u16;
        let status_text = get(&resp, "statusText").as_string().unwrap_or_default();
        let text = if (200..300).contains(&status) {
            let read = get(&resp, "text")
                .dyn_into::<Function>()
                .map_err(|_| Error::Remote { status, message: format!("the reply of {at} has no body") })?;
            let body = read.call0(&resp).map_err(|e| failed("cannot read the reply of", &e))?;
            let body = settle(body).await.map_err(|e| failed("cannot read the reply of", &e))?;
            body.as_string().unwrap_or_default()
        } else {
            String::new()
        };
        // The reply's errors name the endpoint too.
        summary_of_reply(status, &status_text, &text).map_err(|e| match e {
            Error::Remote { status, message } => Error::Remote {
                status,
                message: match message.strip_prefix("the summarizer ") {
                    Some(rest) => format!("the summarizer at {at} {rest}"),
                    None => format!("{message} (the summarizer at {at})"),
                },
            },
            other => other,
        })
    }
}

/// What a failed `fetch` says: its message and, when the runtime gives one (Node.js: `cause`
/// with a `code` such as `ECONNREFUSED`), its cause — unless the message already names it.
fn fetch_failure(e: &JsValue) -> String {
    let mut text = js_message(e);
    let cause = get(e, "cause");
    if cause.is_object() {
        let code = get(&cause, "code").as_string().unwrap_or_default();
        let detail = js_message(&cause);
        for part in [code, detail] {
            if !part.is_empty() && !text.contains(&part) {
                text = format!("{text}: {part}");
            }
        }
    }
    text
}

/// Either a JS callback, the package's own extractive summarizer given as one, or the remote
/// endpoint.
pub enum HostModel {
    /// `complete` callback.
    Js(JsComplete),
    /// The package's `extractiveSummarizer` given as `complete`: called as any callback, and the
    /// result says `summarizer: "extractive"`.
    Extractive(JsComplete),
    /// `remoteEndpoint`.
    Remote(RemoteComplete),
}

impl HostModel {
    /// The model of the `complete` function `func`: [`HostModel::Extractive`] when `func` is the
    /// package's `extractiveSummarizer` (the entries mark it with the registered symbol
    /// `session-compaction.extractiveSummarizer`, `pkg-template/shared/freed-guard.js`), else
    /// [`HostModel::Js`].
    pub fn of_function(func: js_sys::Function, signal: &JsValue) -> Self {
        let mark = js_sys::Symbol::for_("session-compaction.extractiveSummarizer");
        let extractive = js_sys::Reflect::get(&func, &mark).is_ok_and(|v| v.is_truthy());
        let complete = JsComplete { func, signal: signal.clone() };
        if extractive {
            HostModel::Extractive(complete)
        } else {
            HostModel::Js(complete)
        }
    }
}

impl Complete for HostModel {
    async fn complete(&self, request: SummaryRequest) -> Result<String> {
        match self {
            HostModel::Js(c) | HostModel::Extractive(c) => c.complete(request).await,
            HostModel::Remote(r) => r.complete(request).await,
        }
    }

    fn summarizer(&self) -> session_compaction::summarize::Summarizer {
        match self {
            HostModel::Extractive(_) => session_compaction::summarize::Summarizer::Extractive,
            _ => session_compaction::summarize::Summarizer::Model,
        }
    }
}

/// Reads `{complete?, remoteEndpoint?, remoteTimeoutMs?}` of an options object: the `complete`
/// callback, else the remote summarizer at `remoteEndpoint`, else at `settings_endpoint` (the
/// call's `settings.remoteEndpoint`, SPEC §5); `None` when there is none of them. A
/// `remoteEndpoint` that is not a string, or a `remoteTimeoutMs` that is not a positive number,
/// is `E_INVALID_ARGUMENT`.
pub fn host_model(
    options: &JsValue,
    settings_endpoint: Option<&str>,
    signal: &JsValue,
) -> std::result::Result<Option<HostModel>, JsValue> {
    let remote = remote_model(options, settings_endpoint, signal)?;
    let complete = get(options, "complete");
    if complete.is_function() {
        return Ok(Some(HostModel::of_function(complete.unchecked_into(), signal)));
    }
    if !complete.is_undefined() && !complete.is_null() {
        return Err(bad_arg("options.complete", "expected a function (request) => Promise<string>"));
    }
    Ok(remote.map(HostModel::Remote))
}

/// The remote summarizer of an options object: `remoteEndpoint`, else `settings_endpoint`
/// (`settings.remoteEndpoint`), with `remoteTimeoutMs`; `None` when neither names a URL.
fn remote_model(
    options: &JsValue,
    settings_endpoint: Option<&str>,
    signal: &JsValue,
) -> std::result::Result<Option<RemoteComplete>, JsValue> {
    let endpoint = get(options, "remoteEndpoint");
    let url = match endpoint.as_string() {
        Some(url) => Some(url),
        None if endpoint.is_undefined() || endpoint.is_null() => settings_endpoint.map(str::to_owned),
        None => return Err(bad_arg("options.remoteEndpoint", "expected a URL string")),
    };
    let Some(url) = url else { return Ok(None) };
    let timeout = get(options, "remoteTimeoutMs");
    let timeout_ms = match timeout.as_f64() {
        Some(t) if t.is_finite() && t > 0.0 => t,
        None if timeout.is_undefined() || timeout.is_null() => REMOTE_TIMEOUT_MS,
        _ => return Err(bad_arg("options.remoteTimeoutMs", "expected a positive number of milliseconds")),
    };
    Ok(Some(RemoteComplete { url, signal: signal.clone(), timeout_ms }))
}

/// Hooks given as one object keyed by event name (the core reads their answers). Each hook is
/// read from the object once, when the call starts ([`JsHooks::of`]): a getter runs once and a
/// hook added or removed during the call changes nothing.
pub struct JsHooks {
    /// The hook functions by name ([`super::options::HOOK_NAMES`]); absent hooks left out.
    functions: Vec<(&'static str, Function)>,
    /// The JS AbortSignal added to `session_before_*` events.
    pub signal: JsValue,
}

impl JsHooks {
    /// The `hooks` of an options object: `undefined`, or an object whose keys are hook names
    /// ([`super::options::HOOK_NAMES`]) holding functions, each read once; anything else, and a
    /// hook that cannot be read (a throwing getter or Proxy), is `E_INVALID_ARGUMENT` naming the
    /// key (`options.hooks.session_compact`).
    pub fn of(options: &JsValue, signal: JsValue) -> std::result::Result<Self, JsValue> {
        let obj = get(options, "hooks");
        let mut functions = Vec::new();
        if !obj.is_undefined() && !obj.is_null() {
            if !obj.is_object() {
                return Err(bad_arg("options.hooks", "expected an object keyed by hook name"));
            }
            super::options::check_known_keys(&obj, "options.hooks", super::options::HOOK_NAMES)?;
            for &name in super::options::HOOK_NAMES {
                let what = format!("options.hooks.{name}");
                let f = Reflect::get(&obj, &JsValue::from_str(name))
                    .map_err(|e| bad_arg(&what, format!("cannot be read: {}", js_message(&e))))?;
                if let Some(f) = f.dyn_ref::<Function>() {
                    functions.push((name, f.clone()));
                } else if !f.is_undefined() && !f.is_null() {
                    return Err(bad_arg(&what, "expected a function"));
                }
            }
        }
        Ok(Self { functions, signal })
    }

    /// The hook registered under `name`, if any.
    fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|(n, _)| *n == name).map(|(_, f)| f)
    }
}

impl HooksByName for JsHooks {
    fn has(&self, name: &str) -> bool {
        self.function(name).is_some()
    }
    async fn call(&self, name: &str, event: Value) -> Result<Value> {
        let Some(f) = self.function(name) else {
            return Ok(Value::Null);
        };
        let hook_err = |e: JsValue| Error::Hook { hook: name.to_string(), message: js_message(&e) };
        let ev = from_serde(&event).map_err(hook_err)?;
        if name.starts_with("session_before") && !self.signal.is_undefined() {
            let _ = Reflect::set(&ev, &JsValue::from_str("signal"), &self.signal);
        }
        let returned = f.call1(&JsValue::UNDEFINED, &ev).map_err(hook_err)?;
        let value = settle(returned).await.map_err(hook_err)?;
        if value.is_undefined() || value.is_null() {
            return Ok(Value::Null);
        }
        to_value(&value, name).map_err(|e| Error::Hook { hook: name.to_string(), message: js_message(&e) })
    }
}

/// `Date.now()` and `setTimeout`.
pub struct JsClock;

/// Clears a `setTimeout` timer when dropped, so that a wait given up (an abort during a retry
/// backoff drops the sleeping future) leaves no pending timer behind: in Node.js a pending timer
/// keeps the process alive until it fires (up to `maxWaitMs`). Clearing a fired timer is a no-op.
struct TimerGuard(JsValue);

impl Drop for TimerGuard {
    fn drop(&mut self) {
        if self.0.is_undefined() {
            return;
        }
        if let Some(clear) = get(&js_sys::global(), "clearTimeout").dyn_ref::<Function>() {
            let _ = clear.call1(&JsValue::UNDEFINED, &self.0);
        }
    }
}

impl Clock for JsClock {
    fn now_ms(&self) -> f64 {
        js_sys::Date::now()
    }
    async fn sleep(&self, ms: f64) {
        // `setTimeout` fires at once for a delay above its limit: a longer wait (a large
        // `remoteTimeoutMs` or server-asked retry wait) is made of waits within it. NaN or ≤ 0
        // waits once with no delay; an infinite wait never ends.
        let mut left = ms;
        loop {
            let step = left.min(MAX_TIMER_MS);
            timer_sleep(step).await;
            left -= step;
            if left.is_nan() || left <= 0.0 {
                return;
            }
        }
    }
}

/// The longest delay `setTimeout` takes (2³¹ − 1 ms, about 24.8 days): above it browsers, Node.js,
/// Deno and Bun fire the timer at once.
pub const MAX_TIMER_MS: f64 = 2_147_483_647.0;

/// One `setTimeout` wait of `ms` (at most [`MAX_TIMER_MS`]); at once when there is no
/// `setTimeout`. The timer is cleared when the wait is dropped ([`TimerGuard`]).
async fn timer_sleep(ms: f64) {
    let mut timer = JsValue::UNDEFINED;
    let promise = Promise::new(&mut |resolve, _| {
        let set_timeout = get(&js_sys::global(), "setTimeout");
        match set_timeout.dyn_ref::<Function>().map(|f| f.call2(&JsValue::UNDEFINED, &resolve, &JsValue::from_f64(ms)))
        {
            Some(Ok(id)) => timer = id,
            _ => {
                let _ = resolve.call0(&JsValue::UNDEFINED);
            }
        }
    });
    let _guard = TimerGuard(timer);
    let _ = JsFuture::from(promise).await;
}

/// `onEvent(event)` callback.
pub struct JsEvents(pub JsValue);

impl EventSink for JsEvents {
    fn emit(&self, event: AutoCompactionEvent) {
        if let Some(f) = self.0.dyn_ref::<Function>() {
            if let Ok(ev) = from_serde(&event) {
                let _ = f.call1(&JsValue::UNDEFINED, &ev);
            }
        }
    }
}

/// Links a JS `AbortSignal` (optional) to a core [`AbortSignal`] and returns the JS signal to
/// hand to callbacks: the caller's, or a fresh `AbortController`'s that aborts with the core one.
pub fn link_signal(js_signal: &JsValue) -> (AbortSignal, JsValue) {
    let core = AbortSignal::new();
    if !js_signal.is_undefined() && !js_signal.is_null() {
        if get(js_signal, "aborted").as_bool() == Some(true) {
            core.abort();
        } else if let Some(add) = get(js_signal, "addEventListener").dyn_ref::<Function>() {
            let c = core.clone();
            let cb = Closure::once_into_js(move || c.abort());
            let _ = add.call2(js_signal, &JsValue::from_str("abort"), &cb);
        }
        return (core, js_signal.clone());
    }
    // No signal from the caller: make one so callbacks can still stop their own work.
    let ctor = get(&js_sys::global(), "AbortController");
    if let Some(ctor) = ctor.dyn_ref::<Function>() {
        if let Ok(controller) = Reflect::construct(ctor, &js_sys::Array::new()) {
            let signal = get(&controller, "signal");
            let abort = get(&controller, "abort");
            if let Some(abort) = abort.dyn_ref::<Function>() {
                let abort = abort.clone();
                core.on_abort(Box::new(move || {
                    let _ = abort.call0(&controller);
                }));
            }
            return (core, signal);
        }
    }
    (core, JsValue::UNDEFINED)
}
