//! `skills/list`, `skills/get` and `resources/directory/read` ([`crate::skill`]), and the
//! skills' part of `resources/list` and `resources/read`: each skill's `SKILL.md` is
//! listed (a client that knows nothing of the extension sees an ordinary resource, as
//! SEP-2640 intends), and every file of it reads back the bytes its digest names.

use rmcp::ErrorData;
use rmcp::model::{
    CacheScope, GetSkillResult, ListResourcesResult, ListSkillsResult, Resource, ResourceContents,
    Skill as Entry, SkillFrontmatter, SkillResource, SkillResources,
};

use super::{access, convert};
use crate::caller::Caller;
use crate::registry::Registry;
use crate::skill::{Child, DIRECTORY_MIME_TYPE, Skill};

/// How long a 2026 client may keep a skill's entry when the manifest is not watched.
const TTL_MS: u64 = 60_000;

/// The caller may see `skill` (its scopes).
fn shown(skill: &Skill, caller: &Caller) -> bool {
    access::allowed(caller.principal(), &skill.scopes)
}

/// How long the answers may be kept, and by whom: not at all when `--watch` may change
/// them; by this caller only when skills have scopes.
fn hints(registry: &Registry, watching: bool) -> (u64, CacheScope) {
    let scoped = registry
        .skills()
        .iter()
        .any(|skill| !skill.scopes.is_empty());
    (
        if watching { 0 } else { TTL_MS },
        if scoped {
            CacheScope::Private
        } else {
            CacheScope::Public
        },
    )
}

fn entry(skill: &Skill) -> Result<Entry, ErrorData> {
    let frontmatter: SkillFrontmatter = serde_json::from_value(serde_json::Value::Object(
        skill.frontmatter.clone(),
    ))
    .map_err(|error| ErrorData::internal_error(format!("skill `{}`: {error}", skill.name), None))?;
    let files = skill
        .files
        .iter()
        .map(|file| {
            SkillResource::new(
                skill.file_uri(&file.path),
                file.digest.clone(),
                file.bytes.len() as u64,
            )
        })
        .collect();
    Ok(Entry::new(
        skill.uri(),
        frontmatter,
        SkillResources::Files(files),
    ))
}

/// `skills/list`: every skill the caller may see, on one page.
pub(super) fn list(
    registry: &Registry,
    caller: &Caller,
    cursor: Option<&str>,
    watching: bool,
) -> Result<ListSkillsResult, ErrorData> {
    if let Some(cursor) = cursor {
        return Err(ErrorData::invalid_params(
            format!("invalid cursor `{cursor}`: this server lists every skill on one page"),
            None,
        ));
    }
    let skills = registry
        .skills()
        .iter()
        .filter(|skill| shown(skill, caller))
        .map(|skill| entry(skill))
        .collect::<Result<Vec<_>, _>>()?;
    let (ttl, scope) = hints(registry, watching);
    Ok(ListSkillsResult::with_all_items(skills)
        .with_ttl_ms(ttl)
        .with_cache_scope(scope))
}

/// `skills/get`: the skill whose `SKILL.md` is `uri`; `-32602` for any other URI.
pub(super) fn get(
    registry: &Registry,
    caller: &Caller,
    uri: &str,
    watching: bool,
) -> Result<GetSkillResult, ErrorData> {
    let skill = registry
        .skill(uri)
        .filter(|skill| skill.uri() == uri)
        .ok_or_else(|| unknown(format!("no skill `{uri}`"), uri))?;
    access::require(|| format!("`{uri}`"), caller.principal(), &skill.scopes)?;
    let (ttl, scope) = hints(registry, watching);
    Ok(GetSkillResult::new(entry(skill)?)
        .with_ttl_ms(ttl)
        .with_cache_scope(scope))
}

/// `resources/directory/read`: the files and folders directly in a skill's folder, or
/// in one beneath it; `-32602` for anything else.
pub(super) fn directory(
    registry: &Registry,
    caller: &Caller,
    uri: &str,
) -> Result<ListResourcesResult, ErrorData> {
    let not_a_folder = || unknown(format!("`{uri}` is not a folder of a skill"), uri);
    let skill = registry.skill(uri).ok_or_else(not_a_folder)?;
    access::require(|| format!("`{uri}`"), caller.principal(), &skill.scopes)?;
    let children = skill.children(uri).ok_or_else(not_a_folder)?;
    let resources = children
        .into_iter()
        .map(|child| match child {
            Child::File(file) => {
                let name = file.path.rsplit('/').next().unwrap_or(&file.path);
                Resource::new(skill.file_uri(&file.path), name)
                    .with_mime_type(file.mime_type)
                    .with_size(file.bytes.len() as u64)
            }
            Child::Folder(path) => {
                let name = path.rsplit('/').next().unwrap_or(&path).to_owned();
                Resource::new(skill.file_uri(&path), name).with_mime_type(DIRECTORY_MIME_TYPE)
            }
        })
        .collect();
    Ok(ListResourcesResult::with_all_items(resources))
}

/// Each skill's `SKILL.md` the caller may see, for `resources/list`.
pub(super) fn listed(registry: &Registry, caller: &Caller) -> Vec<Resource> {
    registry
        .skills()
        .iter()
        .filter(|skill| shown(skill, caller))
        .filter_map(|skill| {
            let file = skill.entry()?;
            Some(
                Resource::new(skill.uri(), skill.name.clone())
                    .with_description(skill.description())
                    .with_mime_type(file.mime_type)
                    .with_size(file.bytes.len() as u64),
            )
        })
        .collect()
}

/// The contents of a skill's file, as loaded (already redacted); `None` when `uri` names
/// none (the caller's scopes are checked before, with every resource's).
pub(super) fn read(registry: &Registry, uri: &str) -> Option<ResourceContents> {
    let file = registry.skill(uri)?.file(uri)?;
    Some(convert::resource_contents(
        uri.to_owned(),
        file.mime_type.to_owned(),
        file.bytes.to_vec(),
    ))
}

/// `-32602` with the URI, as the extension answers a URI it does not serve.
fn unknown(message: String, uri: &str) -> ErrorData {
    ErrorData::invalid_params(message, Some(serde_json::json!({ "uri": uri })))
}
