//! `resources/list`, `resources/read` and `resources/templates/list`: the manifest's
//! resources and templates, then the outputs kept for this caller.

use rmcp::ErrorData;
use rmcp::model::{
    CacheScope, ErrorCode, ListResourceTemplatesResult, ListResourcesResult, Resource,
    ResourceContents, ResourceTemplate,
};

use super::{access, convert};
use crate::auth::Principal;
use crate::caller::Caller;
use crate::registry::Registry;
use crate::resource::{Contents, DeclaredResource, ReadError};
use crate::revision::Revision;

/// A manifest without resources (declared or kept) serves no resource methods.
pub(super) fn served(registry: &Registry, method: &str) -> Result<(), ErrorData> {
    if registry.serves_resources() {
        Ok(())
    } else {
        Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
            None,
        ))
    }
}

/// Whether `caller` sees `resource`: its scopes, and a page only if it renders MCP Apps.
fn shown(resource: &DeclaredResource, caller: &Caller) -> bool {
    (resource.app.is_none() || caller.apps) && access::allowed(caller.principal(), &resource.scopes)
}

/// Declared resources first, in manifest order, then this caller's kept outputs.
pub(super) fn list(registry: &Registry, caller: &Caller) -> Result<ListResourcesResult, ErrorData> {
    served(registry, "resources/list")?;
    let mut resources = registry
        .resources()
        .filter(|resource| shown(resource, caller))
        .map(|resource| {
            serde_json::from_value::<Resource>(serde_json::Value::Object(
                resource.definition.clone(),
            ))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| {
            ErrorData::internal_error(format!("a resource did not convert: {error}"), None)
        })?;
    resources.extend(super::skills::listed(registry, caller));
    resources.extend(
        registry
            .store()
            .list(&caller.identity)
            .iter()
            .filter_map(convert::resource),
    );
    // Kept outputs come and go: clients must not cache the list.
    Ok(ListResourcesResult::with_all_items(resources)
        .with_ttl_ms(0)
        .with_cache_scope(CacheScope::Private))
}

pub(super) fn templates(
    registry: &Registry,
    principal: Option<&Principal>,
) -> Result<ListResourceTemplatesResult, ErrorData> {
    served(registry, "resources/templates/list")?;
    let templates = registry
        .templates()
        .iter()
        .filter(|template| access::allowed(principal, &template.scopes))
        .map(|template| {
            serde_json::from_value::<ResourceTemplate>(serde_json::Value::Object(
                template.definition.clone(),
            ))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| {
            ErrorData::internal_error(format!("a template did not convert: {error}"), None)
        })?;
    Ok(ListResourceTemplatesResult::with_all_items(templates))
}

/// The contents at `uri`: a declared resource, a template's, or a kept output, with every
/// secret the manifest references redacted (a file beside the manifest may hold one, and a
/// kept output is a tool's whole stdout, which its result showed only in part).
pub(super) fn read(
    registry: &Registry,
    uri: &str,
    caller: &Caller,
    revision: Revision,
) -> Result<ResourceContents, ErrorData> {
    served(registry, "resources/read")?;
    access::require(
        || format!("`{uri}`"),
        caller.principal(),
        &registry.resource_scopes(uri),
    )?;
    // A page is no resource to a client that renders no MCP Apps.
    let resource = registry
        .resource(uri)
        .filter(|resource| resource.app.is_none() || caller.apps);
    let page = resource.and_then(|resource| resource.app.clone());
    if let Some(contents) = super::skills::read(registry, uri) {
        return Ok(contents);
    }
    let declared = resource.map(DeclaredResource::read);
    let templated = || {
        registry.templates().iter().find_map(|template| {
            template
                .matches(uri)
                .map(|values| template.read(uri, &values))
        })
    };
    let redactor = registry.redactor();
    match declared.or_else(templated) {
        Some(Ok(contents)) => Ok(match contents {
            Contents::Text { mime_type, text } => ResourceContents::TextResourceContents {
                uri: uri.to_owned(),
                mime_type: Some(mime_type),
                text: redactor.redact(&text),
                // A page's `_meta.ui` (its CSP, permissions, border) goes with its contents.
                meta: page.map(|ui| {
                    let mut meta = rmcp::model::JsonObject::new();
                    meta.insert("ui".into(), serde_json::Value::Object(ui));
                    rmcp::model::MetaObject(meta)
                }),
            },
            Contents::Blob { mime_type, bytes } => {
                convert::blob(uri.to_owned(), mime_type, &redactor.redact_bytes(bytes))
            }
        }),
        Some(Err(ReadError::NotFound(message))) => Err(not_found(message, uri, revision)),
        Some(Err(ReadError::Unreadable(message))) => {
            Err(ErrorData::internal_error(message, None))
        }
        None => registry.store().read(uri, &caller.identity).map_or_else(
            || {
                Err(not_found(
                    format!(
                        "no resource `{uri}`: kept outputs expire after an hour, or when the store is full"
                    ),
                    uri,
                    revision,
                ))
            },
            |(mime_type, bytes)| {
                let bytes = redactor.redact_bytes(bytes);
                Ok(convert::resource_contents(uri.to_owned(), mime_type, bytes))
            },
        ),
    }
}

/// Not found: `-32602` in 2026-07-28 (SEP-2164), `-32002` before it; the data names the
/// URI.
fn not_found(message: String, uri: &str, revision: Revision) -> ErrorData {
    let data = Some(serde_json::json!({ "uri": uri }));
    if revision == Revision::V2026_07 {
        ErrorData::invalid_params(message, data)
    } else {
        ErrorData::resource_not_found(message, data)
    }
}
