//! Reading the requests a client sends most, the short way.
//!
//! rmcp reads every message as an untagged enum: it buffers the line, tries it as each
//! message shape, and tries a request as each of `ClientRequest`'s variants in turn until
//! one fits. `tools/call` is the fourteenth, so every call builds, formats and drops 13
//! serde errors first: about 30 % of the instructions of a static call over stdio.
//!
//! A line that is plainly a request (`method` and `id`, neither `result` nor `error`, no
//! key twice) for `tools/call` or `tools/list` is parsed as that request type alone. No
//! other variant can take those methods (each has its own method name, and the catch-all
//! comes last), so rmcp would pick the same one. Anything else, and any line that does not
//! parse this way, goes through rmcp's own parse, which also words the errors. A
//! differential property test holds that whatever this returns, rmcp's parse returns too.

use std::borrow::Cow;

use rmcp::model::{CallToolRequest, ClientRequest, JsonRpcRequest, ListToolsRequest};
use rmcp::service::{RoleServer, RxJsonRpcMessage};
use serde::de::{DeserializeOwned, IgnoredAny};
use serde::{Deserialize, Deserializer};

/// The keys that say what a line is, read without building the rest.
#[derive(Deserialize)]
struct Shape<'a> {
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "present")]
    id: bool,
    #[serde(default, deserialize_with = "present")]
    result: bool,
    #[serde(default, deserialize_with = "present")]
    error: bool,
}

/// A key counts when it is there, whatever its value (`null` too), as rmcp counts it.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    IgnoredAny::deserialize(deserializer).map(|_| true)
}

/// The message rmcp would read from `line`, when `line` is a request this path knows;
/// `None` leaves the line to rmcp.
pub(super) fn request(line: &[u8]) -> Option<RxJsonRpcMessage<RoleServer>> {
    let shape: Shape<'_> = serde_json::from_slice(line).ok()?;
    if !shape.id || shape.result || shape.error {
        return None;
    }
    let request = match shape.method.as_deref()? {
        "tools/call" => typed::<CallToolRequest>(line, ClientRequest::CallToolRequest)?,
        "tools/list" => typed::<ListToolsRequest>(line, ClientRequest::ListToolsRequest)?,
        _ => return None,
    };
    Some(RxJsonRpcMessage::<RoleServer>::Request(request))
}

fn typed<T: DeserializeOwned>(
    line: &[u8],
    variant: fn(T) -> ClientRequest,
) -> Option<JsonRpcRequest<ClientRequest>> {
    let JsonRpcRequest {
        jsonrpc,
        id,
        request,
    } = serde_json::from_slice::<JsonRpcRequest<T>>(line).ok()?;
    Some(JsonRpcRequest {
        jsonrpc,
        id,
        request: variant(request),
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    use rmcp::model::GetMeta as _;
    use rmcp::service::{RoleServer, RxJsonRpcMessage};
    use serde_json::{Map, Value, json};

    use super::request;

    /// What rmcp's own parse makes of `line`, next to ours: ours is either `None` or the
    /// same message (the same JSON when written again, the same `_meta`).
    fn agrees(line: &[u8]) -> Result<bool, TestCaseError> {
        let Some(ours) = request(line) else {
            return Ok(false);
        };
        let theirs = serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line);
        let text = String::from_utf8_lossy(line);
        let Ok(theirs) = theirs else {
            return Err(TestCaseError::fail(format!(
                "rmcp refused what the short path read: {text}"
            )));
        };
        prop_assert_eq!(
            serde_json::to_value(&ours).expect("ours serializes"),
            serde_json::to_value(&theirs).expect("rmcp's serializes"),
            "{}",
            text
        );
        let (
            RxJsonRpcMessage::<RoleServer>::Request(ours),
            RxJsonRpcMessage::<RoleServer>::Request(theirs),
        ) = (&ours, &theirs)
        else {
            return Err(TestCaseError::fail(format!("not both requests: {text}")));
        };
        prop_assert_eq!(ours.request.method(), theirs.request.method());
        prop_assert_eq!(format!("{ours:?}"), format!("{theirs:?}"), "{}", text);
        prop_assert_eq!(
            serde_json::to_value(ours.request.get_meta()).expect("meta"),
            serde_json::to_value(theirs.request.get_meta()).expect("meta")
        );
        Ok(true)
    }

    #[test]
    fn everyday_requests_take_the_short_path_and_read_as_rmcp_reads_them() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}"#,
            r#"{"jsonrpc":"2.0","id":"a-7","method":"tools/call","params":{"name":"noop"}}"#,
            r#"{"id":2,"jsonrpc":"2.0","params":{"arguments":{"n":1.5,"big":18446744073709551615,"neg":-3,"list":[null,true,"\u00e9"]},"name":"x","_meta":{"progressToken":9}},"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t","requestState":"opaque","inputResponses":{"q1":{"action":"accept","content":{"ok":true}}}}}"#,
            r#"{"jsonrpc":"2.0","\u0069d":9,"method":"tools\/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":10,"method":"tools/list","params":null}"#,
            r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"t"},"x":1,"x":2}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"cursor":"abc"}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"progressToken":"p"}}}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"t"},"extra":{"ignored":[1,2]}}"#,
        ];
        for line in lines {
            assert!(
                agrees(line.as_bytes()).expect("agrees"),
                "took rmcp's path: {line}"
            );
        }
    }

    #[test]
    fn anything_else_is_left_to_rmcp() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"},"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"},"error":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"ping","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":[]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"Tools/Call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t""#,
            "",
        ];
        for line in lines {
            assert!(
                request(line.as_bytes()).is_none(),
                "took the short path: {line}"
            );
        }
    }

    fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            "[a-z\\\\\"é\u{1F600} ]{0,8}".prop_map(Value::String),
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        scalar().prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(("[a-z_]{1,6}", inner), 0..4)
                    .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
            ]
        })
    }

    /// A key's value: most often one that fits, else any kind, or the key is missing.
    fn entry(fitting: Value) -> impl Strategy<Value = Option<Value>> {
        prop_oneof![
            6 => Just(Some(fitting)),
            1 => value().prop_map(Some),
            1 => Just(None),
        ]
    }

    fn message() -> impl Strategy<Value = (String, Option<String>)> {
        let method = prop_oneof![
            4 => Just(json!("tools/call")),
            2 => Just(json!("tools/list")),
            1 => Just(json!("ping")),
            1 => value(),
        ];
        let meta = prop_oneof![
            Just(json!({"progressToken": 1})),
            Just(
                json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
                        "io.modelcontextprotocol/clientCapabilities": {}})
            ),
            value(),
        ];
        let params = (
            entry(json!("echo")),
            entry(json!({"message": "hi"})),
            value(),
            prop::option::of(meta),
            prop::option::weighted(0.3, value()),
            any::<u8>(),
            any::<u64>(),
        )
            .prop_map(|(name, arguments, argument, meta, extra, pick, order)| {
                let mut params = Vec::new();
                if let Some(name) = name {
                    params.push(("name", name));
                }
                if let Some(mut arguments) = arguments {
                    if let Value::Object(map) = &mut arguments {
                        map.insert("value".into(), argument);
                    }
                    params.push(("arguments", arguments));
                }
                if let Some(meta) = meta {
                    params.push(("_meta", meta));
                }
                if let Some(extra) = extra {
                    let key = ["cursor", "requestState", "inputResponses", "other"]
                        [usize::from(pick % 4)];
                    params.push((key, extra));
                }
                shuffled(params, order)
            });
        (
            entry(json!("2.0")),
            entry(json!(1)),
            method,
            prop::option::weighted(0.85, params),
            prop::option::weighted(
                0.25,
                prop_oneof![Just("result"), Just("error"), Just("other")],
            ),
            prop::option::weighted(0.5, prop::sample::select(TWICE)),
            any::<u64>(),
        )
            .prop_map(|(jsonrpc, id, method, params, stray, twice, order)| {
                let mut message = vec![("method", method)];
                if let Some(jsonrpc) = jsonrpc {
                    message.push(("jsonrpc", jsonrpc));
                }
                if let Some(id) = id {
                    message.push(("id", id));
                }
                if let Some(params) = params {
                    message.push(("params", params));
                }
                if let Some(stray) = stray {
                    message.push((stray, json!({})));
                }
                let text = shuffled(message, order).to_string();
                // A key written twice, which serde_json's own maps would hide: at the top,
                // or inside `params`.
                let doubled = twice.map(|key| match key.strip_prefix("params.") {
                    Some(inner) => {
                        text.replacen("\"params\":{", &format!("\"params\":{{\"{inner}\":1,"), 1)
                    }
                    None => text.replacen('{', &format!("{{\"{key}\":1,"), 1),
                });
                (text, doubled)
            })
    }

    /// The keys written twice: each of the message's, and some of `params`'.
    const TWICE: &[&str] = &[
        "method",
        "id",
        "params",
        "jsonrpc",
        "other",
        "params.name",
        "params.arguments",
        "params._meta",
        "params.cursor",
        "params.other",
    ];

    /// An object of `entries` in an order `order` picks (`serde_json` keeps insertion order
    /// here, so the keys reach both parsers in that order).
    fn shuffled(mut entries: Vec<(&str, Value)>, order: u64) -> Value {
        entries.sort_by_cached_key(|(key, _)| {
            let mut hasher = std::hash::DefaultHasher::new();
            std::hash::Hash::hash(&(order, key), &mut hasher);
            std::hash::Hasher::finish(&hasher)
        });
        Value::Object(
            entries
                .into_iter()
                .map(|(key, value)| (key.to_owned(), value))
                .collect::<Map<String, Value>>(),
        )
    }

    #[test]
    fn whatever_the_short_path_reads_rmcp_reads_the_same() {
        let mut runner = TestRunner::new(Config {
            cases: 3000,
            failure_persistence: None,
            ..Config::default()
        });
        let short = std::cell::Cell::new(0_usize);
        let long = std::cell::Cell::new(0_usize);
        runner
            .run(&message(), |(text, doubled)| {
                for line in std::iter::once(text).chain(doubled) {
                    if agrees(line.as_bytes())? {
                        short.set(short.get() + 1);
                    } else {
                        long.set(long.get() + 1);
                    }
                }
                Ok(())
            })
            .expect("the short path reads as rmcp does");
        eprintln!(
            "stdio parse: {} random lines read the short way, all as rmcp reads them; {} left to rmcp",
            short.get(),
            long.get()
        );
        assert!(short.get() > 400, "too few lines took the short path");
        assert!(long.get() > 500, "too few lines were left to rmcp");
    }
}
