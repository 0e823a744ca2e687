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
