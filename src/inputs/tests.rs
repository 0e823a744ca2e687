use std::sync::Arc;

use super::*;
use crate::schema::CompiledSchema;
use crate::template::Template;

fn ask(key: &str, message: &str, field: &str, optional: bool) -> Input {
    let schema =
        json!({"type": "object", "properties": {field: {"type": "string"}}, "required": [field]});
    Input::Ask(Ask {
        key: key.into(),
        optional,
        message: Template::parse(message).expect("template"),
        compiled: Arc::new(CompiledSchema::compile(&schema).expect("schema")),
        schema,
    })
}

fn sample(name: &str, prompt: &str) -> Input {
    Input::Sample(Sample {
        prompt: Template::parse(prompt).expect("template"),
        system: None,
        max_tokens: 10,
        name: name.into(),
    })
}

fn answers(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(key, value)| ((*key).to_owned(), value.clone()))
        .collect()
}

fn keys(step: &Step) -> Vec<&str> {
    match step {
        Step::Ask(round) => round.iter().map(|r| r.key.as_str()).collect(),
        Step::Ready(_) => Vec::new(),
    }
}

#[test]
fn dependent_inputs_take_rounds_and_independent_ones_share_one() {
    let inputs = Inputs {
        items: vec![
            ask("step1", "Name?", "name", false),
            ask("step2", "{name}, colour?", "color", false),
            Input::Roots,
            sample("greeting", "Greet {name}"),
        ],
    };
    let all = |_| true;
    let arguments = Map::new();
    let first = inputs.step(&arguments, &Map::new(), all).expect("step");
    assert_eq!(keys(&first), ["step1", "roots"]);
    let given = answers(&[
        (
            "step1",
            json!({"action": "accept", "content": {"name": "Ann"}}),
        ),
        (
            "roots",
            json!({"roots": [{"uri": "file:///srv/a%20b"}, {"uri": "https://x"}]}),
        ),
        ("stray", json!(1)),
    ]);
    let second = inputs.step(&arguments, &given, all).expect("step");
    assert_eq!(keys(&second), ["step2", "greeting"]);
    let Step::Ask(round) = &second else {
        unreachable!()
    };
    assert_eq!(round[0].params["message"], json!("Ann, colour?"));
    assert_eq!(round[1].method, "sampling/createMessage");
    let mut given = given;
    given.insert(
        "step2".into(),
        json!({"action": "accept", "content": {"color": "blue"}}),
    );
    given.insert(
        "greeting".into(),
        json!({"role": "assistant", "content": {"type": "text", "text": "Hi Ann"}, "model": "m"}),
    );
    let Step::Ready(done) = inputs.step(&arguments, &given, all).expect("step") else {
        panic!("expected ready")
    };
    assert_eq!(done["name"], json!("Ann"));
    assert_eq!(done["color"], json!("blue"));
    assert_eq!(done["greeting"], json!("Hi Ann"));
    assert_eq!(done["roots"], json!("/srv/a b"), "only file roots, decoded");
    assert!(!done.contains_key("stray"));
}

#[test]
fn refusals_bad_answers_and_missing_capabilities_stop_the_call() {
    let inputs = Inputs {
        items: vec![ask("ok", "Sure?", "why", true), sample("s", "Say")],
    };
    let declined = answers(&[("ok", json!({"action": "decline"}))]);
    assert!(matches!(
        inputs.step(&Map::new(), &declined, |_| true),
        Err(Stop::Refused(message)) if message.contains("declined")
    ));
    for malformed in [
        json!(12345),
        json!({"action": "maybe"}),
        json!({"action": "accept", "content": 3}),
    ] {
        let given = answers(&[("ok", malformed)]);
        assert!(matches!(
            inputs.step(&Map::new(), &given, |_| true),
            Err(Stop::Malformed(_))
        ));
    }
    let wrong = answers(&[("ok", json!({"action": "accept", "content": {"why": 7}}))]);
    assert!(matches!(
        inputs.step(&Map::new(), &wrong, |_| true),
        Err(Stop::Refused(message)) if message.contains("does not fit")
    ));
    // Without elicitation, the optional question is skipped; without sampling, the call
    // cannot go on at all.
    let only_sampling = |capability| capability == Capability::Sampling;
    assert_eq!(
        keys(
            &inputs
                .step(&Map::new(), &Map::new(), only_sampling)
                .expect("step")
        ),
        ["s"]
    );
    assert_eq!(
        inputs.step(&Map::new(), &Map::new(), |capability| capability
            == Capability::Elicitation),
        Err(Stop::Missing(Capability::Sampling))
    );
    let silent = answers(&[(
        "s",
        json!({"role": "assistant", "content": [{"type": "image", "data": "", "mimeType": "image/png"}]}),
    )]);
    assert!(matches!(
        inputs.step(&Map::new(), &silent, only_sampling),
        Err(Stop::Refused(message)) if message.contains("without text")
    ));
}

#[test]
fn an_argument_never_stands_in_for_an_answer_and_empty_roots_stop_the_call() {
    let inputs = Inputs {
        items: vec![ask("ok", "Sure?", "reason", false), Input::Roots],
    };
    // The model sent `reason` and `roots` itself (a full schema may allow them).
    let mut arguments = Map::new();
    arguments.insert("reason".into(), json!("model says yes"));
    arguments.insert("roots".into(), json!("/etc"));
    let Step::Ask(round) = inputs
        .step(&arguments, &Map::new(), |_| true)
        .expect("step")
    else {
        panic!("must ask")
    };
    assert_eq!(round.len(), 2);
    let given = answers(&[
        (
            "ok",
            json!({"action": "accept", "content": {"reason": "user says yes"}}),
        ),
        ("roots", json!({"roots": [{"uri": "file://localhost/srv"}]})),
    ]);
    let Step::Ready(done) = inputs.step(&arguments, &given, |_| true).expect("step") else {
        panic!("expected ready")
    };
    assert_eq!(done["reason"], json!("user says yes"));
    assert_eq!(done["roots"], json!("/srv"));
    let none = answers(&[
        (
            "ok",
            json!({"action": "accept", "content": {"reason": "x"}}),
        ),
        ("roots", json!({"roots": [{"uri": "https://example.com"}]})),
    ]);
    assert!(matches!(
        inputs.step(&arguments, &none, |_| true),
        Err(Stop::Refused(message)) if message.contains("no file:// roots")
    ));
}

#[test]
fn an_input_waiting_on_a_later_one_is_never_skipped() {
    // A manifest cannot declare this (an input names only earlier ones); the engine still
    // refuses rather than run with the question unasked.
    let inputs = Inputs {
        items: vec![ask("first", "{later}?", "x", false), sample("later", "say")],
    };
    let given = answers(&[(
        "later",
        json!({"role": "assistant", "content": {"type": "text", "text": "hi"}}),
    )]);
    assert!(matches!(
        inputs.step(&Map::new(), &given, |_| true),
        Err(Stop::Refused(message)) if message.contains("could not be asked")
    ));
    let only_sampling = |capability| capability == Capability::Sampling;
    let cannot = Inputs {
        items: vec![ask("first", "{later}?", "x", true), sample("later", "say")],
    };
    assert!(cannot.step(&Map::new(), &Map::new(), only_sampling).is_ok());
}
