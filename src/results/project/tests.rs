use serde_json::{Value, json};

use super::{Program, cap_items, capped_note, compile, run};

fn project(code: &str, input: &Value) -> Result<Value, String> {
    let filter = compile(code).map_err(|errors| format!("{errors:?}"))?;
    let out = run(&filter, input.to_string().as_bytes())?;
    Ok(serde_json::from_slice(&out).expect("the worker writes JSON"))
}

#[test]
fn a_program_narrows_a_real_shaped_list_to_what_a_model_reads() {
    let issues = json!([
        {"number": 1, "title": "a", "state": "open", "user": {"login": "x", "url": "https://…"},
         "labels": [{"name": "bug", "color": "f00"}], "body": null},
        {"number": 2, "title": "b", "state": "closed", "user": {"login": "y", "url": "https://…"},
         "labels": [], "body": "text"}
    ]);
    let projected = project(
        "map({number, title, state, user: .user.login, labels: [.labels[].name]})",
        &issues,
    )
    .expect("projected");
    assert_eq!(
        projected,
        json!([
            {"number": 1, "title": "a", "state": "open", "user": "x", "labels": ["bug"]},
            {"number": 2, "title": "b", "state": "closed", "user": "y", "labels": []}
        ])
    );
}

#[test]
fn the_standard_library_is_there_and_keys_keep_their_order() {
    let projected = project(
        r#"{z: .b, a: (.list | sort | unique | join(",")), n: (.s | ascii_downcase | test("^ab"))}"#,
        &json!({"b": 1, "list": ["c", "a", "c"], "s": "ABc"}),
    )
    .expect("projected");
    assert_eq!(projected.to_string(), r#"{"z":1,"a":"a,c","n":true}"#);
}

#[test]
fn a_program_gives_one_value_or_says_why_not() {
    let none = project("empty", &json!(1)).expect_err("no value");
    assert_eq!(none, "the projection gave no value");
    let many = project(".[]", &json!([1, 2])).expect_err("two values");
    assert!(many.contains("more than one value"), "{many}");
    assert_eq!(project("[.[]]", &json!([1, 2])), Ok(json!([1, 2])));
    let failed = project(".a.b", &json!({"a": 3})).expect_err("cannot index a number");
    assert!(failed.starts_with("the projection failed: "), "{failed}");
    let halted = project("halt", &json!(1)).expect_err("halt ends no process here");
    assert_eq!(halted, "the projection called `halt`");
}

#[test]
fn compile_errors_point_at_what_is_wrong() {
    let errors = Program::check(".a | nosuchfilter(1)").expect_err("undefined");
    assert_eq!(errors.len(), 1);
    assert_eq!(
        &".a | nosuchfilter(1)"[errors[0].span.clone()],
        "nosuchfilter"
    );
    assert!(errors[0].message.contains("nosuchfilter/1"), "{errors:?}");

    let errors = Program::check("{a: .b").expect_err("unclosed");
    assert!(!errors.is_empty());
    assert!(errors[0].span.end <= "{a: .b".len());

    let errors = Program::check(r#"import "x" as x; ."#).expect_err("no modules");
    assert!(errors[0].message.contains("cannot import"), "{errors:?}");

    let errors = Program::check("$ENV").expect_err("no variables are bound");
    assert_eq!(&"$ENV"[errors[0].span.clone()], "$ENV");
    assert!(Program::check("input").is_err(), "no inputs are given");
}

#[test]
fn arrays_are_capped_at_the_top_or_as_the_objects_fields() {
    let mut list = json!([1, 2, 3, 4, 5]);
    assert_eq!(cap_items(&mut list, 2), 3);
    assert_eq!(list, json!([1, 2]));

    let mut page = json!({"items": [1, 2, 3], "more": ["a", "b", "c", "d"], "total": 7,
        "nested": {"deep": [1, 2, 3]}});
    assert_eq!(cap_items(&mut page, 2), 3);
    assert_eq!(page["items"], json!([1, 2]));
    assert_eq!(page["more"], json!(["a", "b"]));
    assert_eq!(
        page["nested"]["deep"],
        json!([1, 2, 3]),
        "only the top level is capped"
    );

    let mut short = json!([1]);
    assert_eq!(cap_items(&mut short, 2), 0);
    let mut scalar = json!("x");
    assert_eq!(cap_items(&mut scalar, 0), 0);
    assert!(capped_note(1, 2).contains("1 more item left out"));
    assert!(capped_note(3, 2).contains("3 more items left out"));
}

/// Pieces of jq programs, joined at random: real syntax, half-finished syntax, and
/// characters that lex as nothing.
fn program() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let pieces = prop::sample::select(vec![
        ".",
        ".a",
        "[",
        "]",
        "{",
        "}",
        "(",
        ")",
        "|",
        ",",
        ":",
        ";",
        "$x",
        "$__loc__",
        "@base64",
        "\"s\\(",
        "\"",
        "\\u12",
        "def f:",
        "f",
        "if",
        "then",
        "else",
        "end",
        "as",
        "reduce",
        "foreach",
        "try",
        "catch",
        "label $l",
        "break $l",
        "?",
        "//",
        "+",
        "-",
        "1e999",
        "0x",
        "import \"m\" as m;",
        "include \"m\";",
        "map(",
        "select(",
        "..",
        "§",
        "💣",
        " ",
        "\n",
        "#",
        "?//",
        "$ENV",
        "input",
        "limit(1;",
        "getpath([",
        "@json \"",
    ]);
    prop::collection::vec(pieces, 0..24).prop_map(|pieces| pieces.concat())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, ..Default::default() })]

    /// The loader compiles an author's program at every load (and on every reload of a
    /// serving manifest): whatever the text, it answers with a program or with errors whose
    /// places lie inside the text, and never panics.
    #[test]
    fn any_text_compiles_or_says_where_it_is_wrong(code in program()) {
        match Program::check(&code) {
            Ok(program) => proptest::prop_assert_eq!(program.code(), code.as_str()),
            Err(errors) => {
                proptest::prop_assert!(!errors.is_empty());
                for error in errors {
                    proptest::prop_assert!(error.span.end <= code.len(), "{:?} in {:?}", error, code);
                    proptest::prop_assert!(code.is_char_boundary(error.span.start));
                }
            }
        }
    }
}

#[test]
fn the_deepest_programs_the_bound_admits_compile_without_ending_the_process() {
    let chain = |item: &str, between: &str| {
        let count = (super::MAX_PROGRAM + between.len()) / (item.len() + between.len());
        vec![item; count].join(between)
    };
    let nested = |open: &str, middle: &str, close: &str| {
        let levels = (super::MAX_PROGRAM - middle.len()) / (open.len() + close.len());
        format!("{}{middle}{}", open.repeat(levels), close.repeat(levels))
    };
    let programs = [
        nested("(", ".", ")"),
        nested("[", ".", "]"),
        nested("{a:", ".", "}"),
        nested("\"\\(", ".", ")\""),
        nested("if . then ", ".", " else . end"),
        nested("def f: ", ".", "; f"),
        nested("-", "1", ""),
        chain(".", "|"),
        chain("1", "+"),
        chain("1", ","),
        chain(".", "//"),
        chain(".a", ""),
    ];
    for code in programs {
        assert!(code.len() <= super::MAX_PROGRAM, "{}", code.len());
        // Compiles or says why; either way this process is still here.
        let _ = Program::check(&code);
    }
    let over = ".".repeat(super::MAX_PROGRAM + 1);
    let errors = Program::check(&over).expect_err("too long");
    assert!(
        errors[0].message.contains("more than the 16384"),
        "{errors:?}"
    );
}
