//! The importer against hostile descriptions: whatever a description says, what is
//! written loads with no error, reads no secret the user did not name, and stays bounded.

use proptest::prelude::*;
use serde_json::json;

use super::*;

fn options() -> Options {
    Options {
        filters: Filters::default(),
        base_url: None,
        env_prefix: "T_".to_owned(),
        no_output_schema: false,
        max_output_schema: 16 * 1024,
        project: false,
        max_items: None,
        server_name: None,
        command_line: "mcp-serve import openapi spec.json".to_owned(),
    }
}

/// Text with every character that could break out of TOML, a template or a header.
fn hostile() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("'''".to_owned()),
            Just("\"\"\"".to_owned()),
            Just("\n[[tools]]\nname = \"evil\"\n".to_owned()),
            Just("{".to_owned()),
            Just("}".to_owned()),
            Just("${env:HOME}".to_owned()),
            Just("\\".to_owned()),
            Just("\u{0}".to_owned()),
            Just("\u{7f}".to_owned()),
            Just("\r\n".to_owned()),
            Just("é😀".to_owned()),
            Just(" ".to_owned()),
            Just(":/?#[]@".to_owned()),
            "[a-zA-Z0-9_.-]{1,6}",
        ],
        0..6,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Whatever the names and texts of a description, the import never panics, and what
    /// it writes loads with no error, as exactly the tools it reports, texts intact.
    #[test]
    fn hostile_descriptions_import_to_manifests_that_load_as_reported(
        id in hostile(),
        summary in hostile(),
        description in hostile(),
        path_name in hostile(),
        query_name in hostile(),
        header_name in hostile(),
        field in hostile(),
        scheme_key in hostile(),
        server_path in hostile(),
        media in hostile(),
    ) {
        let document = json!({
            "openapi": "3.0.3",
            "info": {"title": summary, "version": description},
            "servers": [{"url": "https://api.example.com/v1"}],
            // Names of variables every test run has, so a kept credential loads.
            "components": {"securitySchemes": {
                "HOME": {"type": "apiKey", "in": "header", "name": scheme_key},
                "PATH": {"type": "apiKey", "in": "query", "name": scheme_key},
                "CARGO_MANIFEST_DIR": {"type": "apiKey", "in": "cookie", "name": scheme_key}
            }},
            "security": [{"CARGO_MANIFEST_DIR": []}, {"HOME": []}, {"PATH": []}],
            "tags": [{"name": summary, "description": description}, {"name": id}],
            "paths": {
                format!("/items/{{{path_name}}}"): {
                    "post": {
                        "operationId": id,
                        "tags": [summary, id, description],
                        "summary": summary,
                        "description": description,
                        "parameters": [
                            {"name": path_name, "in": "path", "required": true, "schema": {"type": "string"}},
                            {"name": query_name, "in": "query", "schema": {"type": "integer"}, "description": description},
                            {"name": header_name, "in": "header", "schema": {"type": "string"}}
                        ],
                        "requestBody": {"content": {format!("application/{media}+json"): {"schema": {
                            "type": "object", "properties": {field.clone(): {"type": "string", "description": summary}}
                        }}}},
                        "responses": {"200": {"description": "ok"}}
                    }
                },
                "/plain": {
                    "servers": [{"url": format!("https://api.example.com/{server_path}")}],
                    "get": {"operationId": id, "responses": {"204": {"description": "none"}}}
                },
                // A response whose fields have hostile names: `--project` writes them into
                // a jq program, which must compile as the manifest loads.
                "/always": {"get": {"operationId": "always", "responses": {"200": {
                    "description": "fields",
                    "content": {"application/json": {"schema": {"type": "array", "items": {
                        "type": "object", "required": [field.clone()],
                        "properties": {
                            field.clone(): {"type": "string"},
                            "links_url": {"type": "string"},
                            "nested": {"type": "object"}
                        }
                    }}}}
                }}}},
                // The newer sinks: styled and reserved query values, a reserved path
                // value, a multipart body with a file part, under hostile names.
                format!("/up/{{{path_name}}}"): {
                    "put": {
                        "operationId": format!("{id}-up"),
                        "parameters": [
                            {"name": path_name, "in": "path", "required": true, "allowReserved": true, "schema": {"type": "string"}},
                            {"name": query_name, "in": "query", "style": "pipeDelimited", "allowReserved": true, "schema": {"type": "array", "items": {"type": "string"}}},
                            {"name": header_name, "in": "query", "style": "deepObject", "schema": {"type": "object"}}
                        ],
                        "requestBody": {"content": {"multipart/form-data": {"schema": {
                            "type": "object", "properties": {
                                field.clone(): {"type": "string", "format": "binary"},
                                media.clone(): {"type": "object", "pattern": summary}
                            }
                        }, "encoding": {field.clone(): {"contentType": media}}}}},
                        "responses": {"204": {"description": "none"}}
                    }
                }
            }
        });
        let mut options = options();
        options.env_prefix = String::new();
        options.project = true;
        options.max_items = Some(3);
        let imported = import(&document.to_string(), &options).expect("one operation always imports");
        let always = imported.kept.iter().find(|tool| tool.name == "always").expect("always");
        if field != "links_url" && field != "nested" && !field.ends_with("_url") && field != "url" && field != "href" && !field.ends_with("Url") {
            prop_assert!(always.project.as_ref().is_some_and(|program| program.contains("any(. == $k)")), "{:?}", always.project);
            prop_assert_eq!(always.max_items, Some(3));
        }
        // Only the credentials' own variables are read: nothing from a description's text.
        let mut table = "";
        for line in imported.manifest.lines() {
            if line.starts_with('[') {
                table = line;
            }
            if table.starts_with("[tools.http") {
                prop_assert!(!line.contains("${file:") && !line.contains("NEVER_SET"), "{line}");
            }
        }
        let registry = crate::manifest::parse(&imported.manifest, "tools.toml", std::path::Path::new("/"))
            .unwrap_or_else(|error| panic!("{error}\n{}", imported.manifest));
        let loaded: Vec<String> = registry.tools().map(|tool| tool.name.clone()).collect();
        let reported: Vec<String> = imported.kept.iter().map(|tool| tool.name.clone()).collect();
        prop_assert_eq!(loaded, reported);
        for (tool, kept) in registry.tools().zip(&imported.kept) {
            let description = tool.definition.get("description").and_then(serde_json::Value::as_str);
            prop_assert_eq!(description, kept.description.as_deref());
        }
        // Every tag that names something became a toolset of exactly its tools.
        for set in registry.toolsets() {
            let members: Vec<&str> = imported.kept.iter()
                .filter(|tool| tool.toolsets.contains(&set.name))
                .map(|tool| tool.name.as_str())
                .collect();
            prop_assert_eq!(set.tools.iter().map(String::as_str).collect::<Vec<_>>(), members);
        }
        let tagged = imported.kept.iter().flat_map(|tool| &tool.toolsets).count();
        prop_assert!(tagged == 0 || !registry.toolsets().is_empty());
    }
}

#[test]
fn tags_become_toolsets_with_their_spelling_and_description() {
    let document = json!({
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "tags": [{"name": "Pull Requests", "description": "Review and merge"}, {"name": "unused"}],
        "paths": {
            "/pulls": {"get": {"operationId": "list_pulls", "tags": ["Pull Requests"], "responses": {"204": {"description": "-"}}}},
            "/issues": {"get": {"operationId": "list_issues", "tags": ["issues", "Pull Requests"], "responses": {"204": {"description": "-"}}}},
            "/meta": {"get": {"operationId": "meta", "responses": {"204": {"description": "-"}}}}
        }
    });
    let imported = import(&document.to_string(), &options()).expect("imports");
    assert!(imported.manifest.contains(
        "[[toolsets]]\nname = \"pull-requests\"\ntitle = \"Pull Requests\"\ndescription = \"Review and merge\"\n"
    ), "{}", imported.manifest);
    let registry =
        crate::manifest::parse(&imported.manifest, "tools.toml", std::path::Path::new("/"))
            .unwrap_or_else(|error| panic!("{error}\n{}", imported.manifest));
    let sets: Vec<(&str, Vec<&str>)> = registry
        .toolsets()
        .iter()
        .map(|set| {
            (
                set.name.as_str(),
                set.tools.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        sets,
        [
            ("pull-requests", vec!["list_pulls", "list_issues"]),
            ("issues", vec!["list_issues"])
        ],
        "a tag no kept operation has is no toolset"
    );
    let chosen = registry
        .select(&crate::toolset::Selection::of(&["issues".to_owned()]))
        .expect("a declared set");
    assert_eq!(
        chosen
            .tools()
            .map(|tool| tool.name.as_str())
            .collect::<Vec<_>>(),
        ["list_issues"]
    );
}

/// A description with one `POST /a` (or what `path` says) and these parts.
fn description(
    path: &str,
    operation: &serde_json::Value,
    components: &serde_json::Value,
) -> String {
    json!({
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "components": components,
        "paths": {path: {"post": operation}, "/always": {"get": {"operationId": "always", "responses": {"204": {"description": "-"}}}}}
    })
    .to_string()
}

/// Imports, loads (with every credential variable named `HOME`, which is set), and returns
/// the tool for `POST /a`, if kept, with the summary's reasons.
fn import_a(
    path: &str,
    operation: &serde_json::Value,
    components: &serde_json::Value,
) -> (Option<tool::Tool>, Import) {
    let mut options = options();
    options.env_prefix = String::new();
    let mut imported =
        import(&description(path, operation, components), &options).expect("imports");
    crate::manifest::parse(&imported.manifest, "tools.toml", std::path::Path::new("/"))
        .unwrap_or_else(|error| panic!("{error}\n{}", imported.manifest));
    let index = imported.kept.iter().position(|tool| tool.method == "POST");
    let tool = index.map(|index| imported.kept.remove(index));
    (tool, imported)
}

fn body(schema: &serde_json::Value) -> serde_json::Value {
    json!({"operationId": "a", "requestBody": {"required": true, "content": {"application/json": {"schema": schema}}}, "responses": {"204": {"description": "-"}}})
}

#[test]
fn a_security_scheme_name_cannot_smuggle_a_secret_reference_into_a_request() {
    let components = json!({"securitySchemes": {"HOME": {"type": "apiKey", "in": "cookie", "name": "sid=x; leak=${file:/etc/hostname}; a"}}});
    let operation = json!({"operationId": "a", "security": [{"HOME": []}], "responses": {"204": {"description": "-"}}});
    let (tool, imported) = import_a("/a", &operation, &components);
    let tool = tool.expect("kept, without the credential");
    assert!(tool.headers.is_empty(), "{:?}", tool.headers);
    assert!(
        tool.notes
            .iter()
            .any(|note| note.contains("cannot be sent as a cookie name")),
        "{:?}",
        tool.notes
    );
    // Named in a comment (the note), never in a value.
    assert!(
        imported
            .manifest
            .lines()
            .all(|line| line.starts_with('#') || !line.contains("${file:"))
    );
    // Digest is a challenge, not a value to send: left out with a note, never `Digest ${…}`.
    let components = json!({"securitySchemes": {"HOME": {"type": "http", "scheme": "digest"}}});
    let (tool, _) = import_a("/a", &operation, &components);
    let tool = tool.expect("kept");
    assert!(
        tool.headers.is_empty()
            && tool
                .notes
                .iter()
                .any(|note| note.contains("not one mcp-serve can send"))
    );
}

#[test]
fn literal_dollars_braces_and_queries_never_reach_a_url() {
    let operation = json!({"operationId": "a", "responses": {"204": {"description": "-"}}});
    let (tool, imported) = import_a("/a/${id}", &operation, &json!({}));
    assert!(tool.is_none());
    assert!(
        imported
            .dropped
            .iter()
            .any(|dropped| dropped.reason.contains("has a `$`"))
    );
    let mut with_server = operation.clone();
    with_server["servers"] = json!([{"url": "https://api.example.com/{v}", "variables": {"v": {"default": "v1?x=${env:HOME}"}}}]);
    let (tool, imported) = import_a("/a", &with_server, &json!({}));
    assert!(tool.is_none(), "{}", imported.manifest);
}

#[test]
fn clashing_names_are_sent_once_and_the_manifest_still_loads() {
    let components =
        json!({"securitySchemes": {"HOME": {"type": "apiKey", "in": "query", "name": "api_key"}}});
    let operation = json!({
        "operationId": "a", "security": [{"HOME": []}],
        "parameters": [
            {"name": "api_key", "in": "query", "schema": {"type": "string"}},
            {"name": "X-Id", "in": "header", "schema": {"type": "string"}},
            {"name": "x-id", "in": "header", "schema": {"type": "string"}},
            {"name": "Expect", "in": "header", "schema": {"type": "string"}},
            {"name": "ghost", "in": "path", "required": true, "schema": {"type": "string"}}
        ],
        "responses": {"204": {"description": "-"}}
    });
    let (tool, _) = import_a("/a", &operation, &components);
    let tool = tool.expect("kept");
    assert_eq!(
        tool.query,
        [("api_key".to_owned(), "${env:HOME}".to_owned())]
    );
    assert_eq!(tool.headers, [("X-Id".to_owned(), "{X-Id}".to_owned())]);
    assert_eq!(
        tool.input_schema["properties"]
            .as_object()
            .map(serde_json::Map::len),
        Some(1),
        "{}",
        tool.input_schema
    );
    assert_eq!(tool.notes.len(), 4, "{:?}", tool.notes);
}

#[test]
fn body_fields_through_all_of_are_taken_once_and_required_as_written() {
    let components = json!({"schemas": {
        "Named": {"type": "object", "properties": {"n": {"type": "string"}, "id": {"type": "integer", "readOnly": true}}},
        "Again": {"type": "object", "properties": {"n": {"type": "integer"}}}
    }});
    let schema = json!({"allOf": [{"$ref": "#/components/schemas/Named"}, {"$ref": "#/components/schemas/Again"}, {"required": ["n", "id"]}]});
    let (tool, _) = import_a("/a", &body(&schema), &components);
    let tool = tool.expect("kept");
    assert!(
        matches!(&tool.body, tool::Body::Json(template) if template == &json!({"n": "{n}"})),
        "{:?}",
        tool.body
    );
    assert_eq!(tool.input_schema["required"], json!(["n"]));
    assert_eq!(tool.input_schema["properties"]["n"]["type"], "string");
    // 3.1: `readOnly` beside a `$ref` is the property's own.
    let components = json!({"schemas": {"Id": {"type": "integer"}}});
    let schema = json!({"type": "object", "required": ["id", "name"], "properties": {"id": {"$ref": "#/components/schemas/Id", "readOnly": true}, "name": {"type": "string"}}});
    let (tool, _) = import_a("/a", &body(&schema), &components);
    let tool = tool.expect("kept");
    assert!(
        tool.input_schema["properties"].get("id").is_none(),
        "{}",
        tool.input_schema
    );
    assert_eq!(tool.input_schema["required"], json!(["name"]));
}

#[test]
fn fan_outs_and_references_that_are_not_schemas_stay_bounded() {
    // Eight levels, each `allOf` four references to the next: 4^8 paths, one schema each.
    let mut schemas = serde_json::Map::new();
    for level in 0..8 {
        let next = format!("#/components/schemas/L{}", level + 1);
        schemas.insert(format!("L{level}"), json!({"allOf": [{"$ref": next}, {"$ref": next}, {"$ref": next}, {"$ref": next}], "properties": {format!("f{level}"): {"type": "string"}}}));
    }
    schemas.insert(
        "L8".to_owned(),
        json!({"type": "object", "properties": {"a": {"type": "string"}}}),
    );
    let (tool, _) = import_a(
        "/a",
        &body(&json!({"$ref": "#/components/schemas/L0"})),
        &json!({"schemas": schemas}),
    );
    let tool = tool.expect("kept");
    assert_eq!(
        tool.input_schema["properties"]
            .as_object()
            .map(serde_json::Map::len),
        Some(9),
        "{}",
        tool.input_schema
    );
    for reference in ["#", "#/components/parameters/P", "#/info"] {
        let (tool, imported) = import_a(
            "/a",
            &body(&json!({"$ref": reference})),
            &json!({"parameters": {"P": {"name": "p", "in": "query"}}}),
        );
        assert!(tool.is_none());
        assert!(
            imported
                .dropped
                .iter()
                .any(|dropped| dropped.reason.contains("does not point at a schema")),
            "{reference}"
        );
    }
}

/// The schema of the tool's output for a `GET /a` whose response is `schema`.
fn output_of(
    schema: &serde_json::Value,
    components: &serde_json::Value,
) -> (Option<tool::Tool>, Import) {
    let operation = json!({"operationId": "a", "responses": {"200": {"description": "-", "content": {"application/json": {"schema": schema}}}}});
    import_a("/a", &operation, components)
}

#[test]
fn a_dynamic_reference_is_bound_to_the_schema_that_specializes_it() {
    // Scalar Galaxy's shape: a generic page whose items are `$dynamicRef: "#itemType"`.
    let components = json!({"schemas": {
        "Page": {"$id": "https://example.com/Page", "type": "object",
            "$defs": {"itemType": {"$dynamicAnchor": "itemType", "not": {}}},
            "properties": {"data": {"type": "array", "items": {"$dynamicRef": "#itemType"}}}},
        "Planet": {"type": "object", "properties": {"name": {"type": "string"}}},
        "Moon": {"type": "object", "properties": {"orbits": {"type": "string"}}}
    }});
    let specialized = |target: &str| {
        json!({
            "$id": format!("https://example.com/{target}s"),
            "$defs": {"itemType": {"$dynamicAnchor": "itemType", "$ref": format!("#/components/schemas/{target}")}},
            "$ref": "#/components/schemas/Page"
        })
    };
    let (tool, imported) = output_of(&specialized("Planet"), &components);
    let output = imported.whole(
        &tool
            .and_then(|tool| tool.output_schema)
            .expect("an output schema"),
    );
    let page = output["$ref"]
        .as_str()
        .and_then(|reference| reference.strip_prefix("#/$defs/"))
        .map_or(&output, |name| &output["$defs"][name]);
    assert_eq!(
        page["properties"]["data"]["items"],
        json!({"$ref": "#/$defs/Planet"}),
        "{output}"
    );
    assert!(!output.to_string().contains("$dynamic"), "{output}");
    crate::schema::CompiledSchema::compile(&output).expect("compiles");
    assert!(
        imported.manifest.contains("\nPlanet = "),
        "{}",
        imported.manifest
    );
    // Two specializations in one schema are two schemas; the generic one keeps its default.
    let both = json!({"type": "object", "properties": {"planets": specialized("Planet"), "moons": specialized("Moon"), "none": {"$ref": "#/components/schemas/Page"}}});
    let (tool, imported) = output_of(&both, &components);
    let output = imported.whole(
        &tool
            .and_then(|tool| tool.output_schema)
            .expect("an output schema"),
    );
    let compiled = crate::schema::CompiledSchema::compile(&output).expect("compiles");
    assert!(compiled.is_valid(&json!({"planets": {"data": [{"name": "Mars"}]}, "moons": {"data": [{"orbits": "Mars"}]}, "none": {"data": []}})), "{output}");
    assert!(
        !compiled.is_valid(&json!({"none": {"data": [{"name": "Mars"}]}})),
        "{output}"
    );
    assert!(
        !compiled.is_valid(&json!({"moons": {"data": [{"orbits": 3}]}})),
        "{output}"
    );
    // A recursive anchor stays finite; one bound to nothing is a note, never a dead schema.
    let tree = json!({"$dynamicAnchor": "node", "type": "object", "properties": {"children": {"type": "array", "items": {"$dynamicRef": "#node"}}}});
    let (tool, imported) = output_of(&tree, &json!({}));
    let output = imported.whole(
        &tool
            .and_then(|tool| tool.output_schema)
            .expect("an output schema"),
    );
    let compiled = crate::schema::CompiledSchema::compile(&output).expect("compiles");
    assert!(compiled.is_valid(&json!({"children": [{"children": []}]})));
    assert!(!compiled.is_valid(&json!({"children": [{"children": 1}]})));
    let (tool, _) = output_of(&json!({"$dynamicRef": "#nowhere"}), &json!({}));
    let tool = tool.expect("kept");
    assert!(tool.output_schema.is_none());
    assert!(
        tool.notes
            .iter()
            .any(|note| note.contains("no `$dynamicAnchor: nowhere` in scope")),
        "{:?}",
        tool.notes
    );
}

#[test]
fn a_path_with_a_fragment_or_a_trace_method_is_refused_and_a_path_query_is_sent() {
    let plain = json!({"operationId": "a", "responses": {"204": {"description": "-"}}});
    for (path, reason) in [
        (
            "/#X-Amz-Target=Cognito.AdminAddUserToGroup",
            "has a fragment (`#X-Amz-Target=Cognito.AdminAddUserToGroup`), which HTTP never sends",
        ),
        ("/files/{id}#add_shared_link", "has a fragment"),
        ("/a?x=${env:HOME}", "has a `$`"),
        ("/a?x=pre{id}", "a placeholder in its query"),
    ] {
        let mut operation = plain.clone();
        operation["parameters"] =
            json!([{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}]);
        let (tool, imported) = import_a(path, &operation, &json!({}));
        assert!(tool.is_none(), "{path}");
        assert!(
            imported
                .dropped
                .iter()
                .any(|dropped| dropped.reason.contains(reason)),
            "{path}: {:?}",
            imported.dropped
        );
        assert!(
            !imported.manifest.contains('#')
                || imported.manifest.lines().all(|line| line.starts_with('#')
                    || !line.contains("url = ")
                    || !line.contains('#'))
        );
    }
    let description = json!({
        "openapi": "3.1.0", "info": {"title": "t", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {"/a": {"trace": {"operationId": "echo", "responses": {"200": {"description": "-"}}}, "get": {"operationId": "ok", "responses": {"204": {"description": "-"}}}}}
    });
    let imported = import(&description.to_string(), &options()).expect("imports");
    assert_eq!(imported.kept.len(), 1);
    assert!(
        imported.dropped[0]
            .reason
            .contains("TRACE is not a method mcp-serve sends")
    );
    // A query the path writes is sent: literal pairs as they are, `{name}` from its parameter.
    let mut operation = plain.clone();
    operation["parameters"] = json!([
        {"name": "lat", "in": "path", "required": true, "schema": {"type": "number"}},
        {"name": "method", "in": "query", "schema": {"type": "string"}}
    ]);
    let (tool, _) = import_a(
        "/rest?method=flickr.photos.search&lat={lat}",
        &operation,
        &json!({}),
    );
    let tool = tool.expect("kept");
    assert_eq!(tool.url, "https://api.example.com/rest");
    assert_eq!(
        tool.query,
        [
            ("method".to_owned(), "flickr.photos.search".to_owned()),
            ("lat".to_owned(), "{lat}".to_owned())
        ]
    );
    assert!(
        tool.notes
            .iter()
            .any(|note| note.contains("`method` is set twice")),
        "{:?}",
        tool.notes
    );
}

#[test]
fn a_pattern_the_validator_cannot_run_is_left_out_with_a_note_naming_it() {
    let operation = json!({"operationId": "a", "parameters": [
        {"name": "q", "in": "query", "schema": {"type": "string", "pattern": "[\\p{all}]*"}},
        {"name": "r", "in": "query", "schema": {"type": "string", "pattern": "^(?!ab)[a-z]+$"}},
        {"name": "s", "in": "query", "schema": {"type": "string", "pattern": "^.{1,2097152}$"}},
        {"name": "t", "in": "query", "schema": {"type": "object", "properties": {}, "patternProperties": {"^[\\w- ]+$": {}, "^x-": {}}}, "style": "deepObject"}
    ], "responses": {"204": {"description": "-"}}});
    let (tool, imported) = import_a("/a", &operation, &json!({}));
    let tool = tool.expect("kept");
    let properties = &tool.input_schema["properties"];
    assert!(properties["q"].get("pattern").is_none());
    assert!(properties["s"].get("pattern").is_none());
    // An ECMA-262 lookahead is something the validator runs: kept.
    assert_eq!(properties["r"]["pattern"], "^(?!ab)[a-z]+$");
    assert_eq!(properties["t"]["patternProperties"], json!({"^x-": {}}));
    for pattern in ["[\\p{all}]*", "^.{1,2097152}$", "^[\\w- ]+$"] {
        assert!(
            tool.notes.iter().any(|note| note
                == &format!("pattern `{pattern}` left out: the validator cannot compile it")),
            "{pattern}: {:?}",
            tool.notes
        );
        assert!(
            imported
                .manifest
                .contains(&format!("# note: pattern `{pattern}` left out"))
        );
    }
    crate::schema::CompiledSchema::compile(&tool.input_schema).expect("compiles");
}

#[test]
fn query_styles_and_reserved_values_are_written_as_the_operation_says() {
    let operation = json!({"operationId": "a", "parameters": [
        {"name": "ids", "in": "query", "style": "form", "explode": false, "schema": {"type": "array", "items": {"type": "integer"}}},
        {"name": "tags", "in": "query", "style": "pipeDelimited", "schema": {"type": "array", "items": {"type": "string"}}},
        {"name": "words", "in": "query", "style": "spaceDelimited", "explode": false, "schema": {"type": "array", "items": {"type": "string"}}},
        {"name": "filter", "in": "query", "style": "deepObject", "explode": true, "schema": {"type": "object", "additionalProperties": true}},
        {"name": "color", "in": "query", "style": "form", "explode": false, "schema": {"type": "object"}},
        {"name": "spread", "in": "query", "schema": {"type": "object"}},
        {"name": "odd", "in": "query", "style": "deepObject", "explode": false, "schema": {"type": "object"}},
        {"name": "redirect", "in": "query", "allowReserved": true, "schema": {"type": "string"}},
        {"name": "path", "in": "path", "required": true, "allowReserved": true, "schema": {"type": "string"}}
    ], "responses": {"204": {"description": "-"}}});
    let (tool, imported) = import_a("/files/{path}", &operation, &json!({}));
    let tool = tool.expect("kept");
    assert_eq!(
        tool.query_styles,
        [
            ("ids".to_owned(), "form", false),
            ("tags".to_owned(), "pipeDelimited", false),
            ("words".to_owned(), "spaceDelimited", false),
            ("filter".to_owned(), "deepObject", true),
            ("color".to_owned(), "form", false)
        ]
    );
    assert_eq!(tool.allow_reserved, ["redirect", "path"]);
    assert!(
        imported
            .manifest
            .contains("ids = { value = \"{ids}\", style = \"form\", explode = false }"),
        "{}",
        imported.manifest
    );
    assert!(
        imported
            .manifest
            .contains("allow-reserved = [\"redirect\", \"path\"]")
    );
    for left_out in [
        "`spread`: an object whose fields become parameters",
        "`odd`: style `deepObject` with `explode: false`",
    ] {
        assert!(
            tool.notes.iter().any(|note| note.contains(left_out)),
            "{left_out}: {:?}",
            tool.notes
        );
    }
}

#[test]
fn a_multipart_body_becomes_text_json_and_base64_file_parts() {
    let schema = json!({"type": "object", "required": ["file", "title"], "properties": {
        "title": {"type": "string"}, "count": {"type": "integer"}, "meta": {"type": "object"},
        "file": {"type": "string", "format": "binary", "description": "The photo."},
        "thumb": {"type": "string", "contentMediaType": "image/png"},
        "many": {"type": "array", "items": {"type": "string", "format": "binary"}},
        "bad\"name": {"type": "string"}
    }});
    let operation = json!({"operationId": "a", "requestBody": {"required": true, "content": {"multipart/form-data": {
        "schema": schema, "encoding": {"file": {"contentType": "image/jpeg, image/png"}}
    }}}, "responses": {"204": {"description": "-"}}});
    let (tool, imported) = import_a("/a", &operation, &json!({}));
    let tool = tool.expect("kept");
    let tool::Body::Multipart(parts) = &tool.body else {
        panic!("a multipart body: {:?}", tool.body);
    };
    let kinds: Vec<(&str, &tool::PartKind)> = parts
        .iter()
        .map(|part| (part.name.as_str(), &part.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("title", &tool::PartKind::Text),
            ("count", &tool::PartKind::Text),
            ("meta", &tool::PartKind::Json),
            (
                "file",
                &tool::PartKind::File {
                    content_type: "image/jpeg".to_owned()
                }
            ),
            (
                "thumb",
                &tool::PartKind::File {
                    content_type: "image/png".to_owned()
                }
            )
        ]
    );
    assert_eq!(
        tool.input_schema["properties"]["file"]["contentEncoding"],
        "base64"
    );
    assert_eq!(tool.input_schema["required"], json!(["title", "file"]));
    assert!(
        tool.notes
            .iter()
            .any(|note| note.contains("`many` is a list of files"))
    );
    assert!(
        tool.notes
            .iter()
            .any(|note| note.contains("a name a part's header cannot carry"))
    );
    assert!(
        imported.manifest.contains(
            "file = { base64 = \"{file}\", filename = \"file\", content-type = \"image/jpeg\" }"
        ),
        "{}",
        imported.manifest
    );
}

#[test]
fn a_tool_the_loader_would_refuse_is_dropped_with_its_reason_never_written() {
    let text = description(
        "/a",
        &json!({"operationId": "a", "responses": {"204": {"description": "-"}}}),
        &json!({}),
    );
    let document = Document::parse(&text).expect("parses");
    let mut imported = import(&text, &options()).expect("imports");
    assert_eq!(imported.kept.len(), 2);
    // Something no step above foresaw: the loader refuses it, so the import drops it.
    imported.kept[0].url = "ftp://api.example.com/a".to_owned();
    let mut dropped = Vec::new();
    let manifest = loadable(
        &document,
        &mut imported.kept,
        &mut dropped,
        &[],
        &options(),
        &serde_json::Map::new(),
    )
    .expect("the other tool is left");
    assert_eq!(imported.kept.len(), 1);
    assert_eq!(dropped.len(), 1);
    assert_eq!(dropped[0].label, "a (POST /a)");
    assert!(
        dropped[0].reason.contains(
            "the manifest would not load it: `url` must start with `http://` or `https://`"
        ),
        "{}",
        dropped[0].reason
    );
    crate::manifest::parse(&manifest, "tools.toml", std::path::Path::new("/")).expect("loads");
    // When nothing is left, the import is refused and nothing is written.
    imported.kept[0].url = "ftp://api.example.com/always".to_owned();
    let refused = loadable(
        &document,
        &mut imported.kept,
        &mut dropped,
        &[],
        &options(),
        &serde_json::Map::new(),
    );
    assert!(
        matches!(refused, Err(ImportError::NothingKept { dropped: 2, .. })),
        "{refused:?}"
    );
}

#[test]
fn a_shared_schema_the_loader_would_refuse_drops_the_tools_that_use_it() {
    let text = description(
        "/a",
        &json!({"operationId": "a", "responses": {"204": {"description": "-"}}}),
        &json!({}),
    );
    let document = Document::parse(&text).expect("parses");
    let mut imported = import(&text, &options()).expect("imports");
    assert_eq!(imported.kept.len(), 2);
    // An entry the loader refuses (no step above writes one), used by the first tool.
    let mut shared = serde_json::Map::new();
    shared.insert("Bad".into(), json!({"type": "string", "$anchor": "bad"}));
    imported.kept[0].input_schema =
        json!({"type": "object", "properties": {"b": {"$ref": "#/$defs/Bad"}}});
    imported.kept[0].uses = vec!["Bad".into()];
    let mut dropped = Vec::new();
    let manifest = loadable(
        &document,
        &mut imported.kept,
        &mut dropped,
        &[],
        &options(),
        &shared,
    )
    .expect("the other tool is left");
    assert_eq!(imported.kept.len(), 1);
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert_eq!(dropped[0].label, "a (POST /a)");
    assert!(
        dropped[0]
            .reason
            .contains("`[schemas] Bad`: it has `$anchor`"),
        "{dropped:?}"
    );
    // And the entry no kept tool uses is not written.
    assert!(!manifest.contains("[schemas]"), "{manifest}");
    crate::manifest::parse(&manifest, "tools.toml", std::path::Path::new("/")).expect("loads");
}
