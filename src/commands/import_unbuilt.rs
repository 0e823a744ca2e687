//! `mcp-serve import openapi`, left out of this build (`cargo build --no-default-features`):
//! the command is still listed, and says how to get it.

use crate::cli::OpenapiArgs;
use crate::failure::Failure;

pub fn openapi(_args: &OpenapiArgs) -> Result<String, Failure> {
    Err(Failure::new(
        "this mcp-serve was built without `import openapi` (cargo feature `openapi`); \
         install a release (README, \"Install\") or build with default features",
    ))
}
