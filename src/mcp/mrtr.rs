//! The 2026 way a call asks the client for input (SEP-2322, multi round-trip requests): the
//! answer is `resultType: "input_required"` with the round's `inputRequests` and a
//! `requestState` that carries the answers of earlier rounds, sealed with HMAC-SHA256
//! (rmcp's `RequestStateCodec`), bound to the method, the tool or prompt and its arguments,
//! and expiring after [`STATE_TTL`]. The client retries with `inputResponses` and the state
//! echoed; a state that was tampered with, has expired or belongs to another call is
//! refused with `-32602`.

use std::path::Path;
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    InputRequest, InputRequests, InputRequiredResult, RequestStateCodec, SealOptions,
};
use serde_json::{Map, Value};

use crate::inputs::Question;

/// How long a client has to answer one round.
pub(super) const STATE_TTL: Duration = Duration::from_secs(600);

/// Why the sealing key could not be had.
#[derive(Debug, thiserror::Error)]
pub enum StateKeyError {
    #[error("could not read the state key file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error(
        "the state key file {path} holds {length} bytes; it needs at least 32 (for example `head -c 48 /dev/urandom | base64 > {path}`)"
    )]
    Short { path: String, length: usize },
    #[error("could not read 32 random bytes for the state key: {0}")]
    Random(std::io::Error),
    #[error("the state key is unusable: {0}")]
    Codec(rmcp::model::RequestStateError),
}

/// The codec sealing `requestState`: from `--state-key-file` (trailing whitespace ignored),
/// so that replicas agree, else a random key for this process.
pub fn state_codec(key_file: Option<&Path>) -> Result<RequestStateCodec, StateKeyError> {
    let key = if let Some(path) = key_file {
        {
            let bytes = std::fs::read(path).map_err(|source| StateKeyError::Read {
                path: path.display().to_string(),
                source,
            })?;
            let trimmed = bytes.trim_ascii_end().to_vec();
            if trimmed.len() < RequestStateCodec::MIN_KEY_LENGTH {
                return Err(StateKeyError::Short {
                    path: path.display().to_string(),
                    length: trimmed.len(),
                });
            }
            trimmed
        }
    } else {
        {
            let mut key = vec![0_u8; 32];
            std::io::Read::read_exact(
                &mut std::fs::File::open("/dev/urandom").map_err(StateKeyError::Random)?,
                &mut key,
            )
            .map_err(StateKeyError::Random)?;
            key
        }
    };
    RequestStateCodec::try_new(key).map_err(StateKeyError::Codec)
}

/// What a sealed state is bound to: the method, the tool's or prompt's name and its
/// arguments (keys sorted, so a client that reorders them is not refused).
pub(super) fn binding(method: &str, name: &str, arguments: &Map<String, Value>) -> Vec<u8> {
    let mut bound = format!("{method}\0{name}\0").into_bytes();
    canonical(&Value::Object(arguments.clone()), &mut bound);
    bound
}

fn canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push(b'{');
            for key in keys {
                out.extend_from_slice(Value::String(key.clone()).to_string().as_bytes());
                out.push(b':');
                canonical(&map[key], out);
                out.push(b',');
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for item in items {
                canonical(item, out);
                out.push(b',');
            }
            out.push(b']');
        }
        other => out.extend_from_slice(other.to_string().as_bytes()),
    }
}

/// The answers of earlier rounds, from the state the client echoed (none on the first).
pub(super) fn open(
    codec: &RequestStateCodec,
    state: Option<&str>,
    binding: &[u8],
) -> Result<Map<String, Value>, ErrorData> {
    let Some(state) = state else {
        return Ok(Map::new());
    };
    codec
        .open_json_with::<Map<String, Value>>(state, binding)
        .map_err(|error| {
            ErrorData::invalid_params(
                format!("requestState refused: {error}; it must be echoed exactly as received, for the same call with the same arguments, within {} minutes", STATE_TTL.as_secs() / 60),
                None,
            )
        })
}

/// The `input_required` answer for one round, carrying `answers` sealed.
pub(super) fn input_required(
    codec: &RequestStateCodec,
    round: &[Question],
    answers: &Map<String, Value>,
    binding: &[u8],
) -> Result<InputRequiredResult, ErrorData> {
    let mut requests = InputRequests::new();
    for request in round {
        let input: InputRequest = serde_json::from_value(request.to_json()).map_err(|error| {
            ErrorData::internal_error(
                format!("the request `{}` did not convert: {error}", request.key),
                None,
            )
        })?;
        requests.insert(request.key.clone(), input);
    }
    let state = codec
        .seal_json_with(
            answers,
            &SealOptions::new().associated_data(binding).ttl(STATE_TTL),
        )
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
    Ok(InputRequiredResult::new(Some(requests), Some(state)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_state_opens_only_untouched_for_the_same_call() {
        let codec = state_codec(None).expect("key");
        let arguments = json!({"b": [1, {"y": 2, "x": 1}], "a": "z"});
        let Value::Object(arguments) = arguments else {
            unreachable!()
        };
        let bound = binding("tools/call", "t", &arguments);
        let mut answers = Map::new();
        answers.insert(
            "step1".into(),
            json!({"action": "accept", "content": {"name": "Ann"}}),
        );
        let round = [Question {
            key: "step2".into(),
            method: "elicitation/create",
            params: json!({"message": "?", "requestedSchema": {"type": "object", "properties": {}}}),
        }];
        let result = input_required(&codec, &round, &answers, &bound).expect("sealed");
        let state = result.request_state.expect("state");
        let Value::Object(reordered) = json!({"a": "z", "b": [1, {"x": 1, "y": 2}]}) else {
            unreachable!()
        };
        let same = binding("tools/call", "t", &reordered);
        assert_eq!(open(&codec, Some(&state), &same).expect("opens"), answers);
        let Value::Object(changed) = json!({"a": "y", "b": [1, {"x": 1, "y": 2}]}) else {
            unreachable!()
        };
        let mut tampered = state.clone();
        tampered.push_str("-TAMPERED");
        for (state, bound) in [
            (tampered.as_str(), same.clone()),
            (state.as_str(), binding("tools/call", "t", &changed)),
            (state.as_str(), binding("tools/call", "other", &reordered)),
            (state.as_str(), binding("prompts/get", "t", &reordered)),
        ] {
            let error = open(&codec, Some(state), &bound).expect_err("refused");
            assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        }
        let other = state_codec(None).expect("key");
        assert!(open(&other, Some(&state), &same).is_err(), "another key");
        assert!(open(&codec, None, &same).expect("first round").is_empty());
    }
}
