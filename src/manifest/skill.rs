//! `[[skills]]`: each a folder beside the manifest, read whole at load ([`crate::skill`]):
//! a folder that is missing, holds a link or a special file, breaks the extension's bounds
//! or has a `SKILL.md` whose frontmatter is not a skill's is an error that names it.

use super::Checker;
use super::wire::SkillWire;
use crate::secret::Redactor;
use crate::skill::Skill;

/// Reads every skill; the ones with problems are left out.
pub(super) fn build_skills(
    wires: &[SkillWire],
    redactor: &Redactor,
    checker: &mut Checker,
) -> Vec<Skill> {
    let mut skills: Vec<Skill> = Vec::new();
    for wire in wires {
        let written = wire.path.get_ref();
        let folder = super::resource::lexical(&checker.refer(written, super::Use::Skill));
        let scopes = super::auth::scopes(wire.scopes.as_ref(), checker);
        match crate::skill::load(&folder, redactor, scopes) {
            Ok(skill) => {
                if skills.iter().any(|other| other.name == skill.name) {
                    checker
                        .error(
                            format!("two skills are named `{}`", skill.name),
                            wire.path.span(),
                        )
                        .hint("a skill's name is its folder's: give each its own");
                } else {
                    skills.push(skill);
                }
            }
            Err(error) => {
                checker.error(format!("skill `{written}`: {error}"), wire.path.span());
            }
        }
    }
    skills
}
