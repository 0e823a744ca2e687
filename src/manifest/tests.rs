//! The manifest error table: each case is a manifest and the whole rendered message.

use std::path::Path;

use super::{ManifestError, parse};

fn rendered(source: &str) -> String {
    match parse(source, "tools.toml", Path::new("/tmp")) {
        Ok(_) => "ok".into(),
        Err(ManifestError::Invalid { rendered, .. }) => rendered,
        Err(other) => other.to_string(),
    }
}

#[test]
fn scratch() {
    for source in [
        "[[tools]]\nnmae = \"x\"\n",
        "[[tools]]\nname = \"x\"\n[tools.command]\nargvv = [\"ls\"]\n",
        "[[tools]]\nname = \"x\"\n[tools.command]\nargv = [\"ls\", \"{q}\"]\n",
        "[[tools]]\nname = \"x\"\n[tools.arguments.q]\ntype = \"strng\"\n[tools.command]\nargv = [\"ls\", \"{q}\"]\n",
        "[[tool]]\nname = 1\n",
        "[[tools]]\nname = \"x\"\n[tools.command]\nargv = [\"ls\"\n",
        "[[tools]]\nname = 3\n[tools.command]\nargv = [\"ls\"]\n",
        "[server]\nname = \"x\"\ntheme = 1\n[[tools]]\nname = \"a b\"\n[tools.command]\nargv = [\"ls\"]\n[[tools]]\nname=\"y\"\n[tools.icons]\n",
    ] {
        eprintln!("{}\n-----", rendered(source));
    }
    panic!();
}
