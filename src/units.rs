//! Durations (`"30s"`, `"500ms"`, `90`) and sizes (`"1MiB"`, `65536`), as the manifest and
//! the command line write them.

use std::time::Duration;

/// A duration or size that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("`{0}` is not a duration; write e.g. \"30s\", \"500ms\" or \"2m\"")]
    NotADuration(String),
    #[error("unknown duration unit `{0}`; use ms, s, m or h")]
    DurationUnit(String),
    #[error("a duration is a number of seconds or a string such as \"30s\"")]
    DurationType,
    #[error("a duration must be more than zero and at most a week")]
    DurationRange,
    #[error("`{0}` is not a size; write e.g. \"1MiB\" or \"64KB\"")]
    NotASize(String),
    #[error("unknown size unit `{0}`; use B, KB, KiB, MB, MiB, GB or GiB")]
    SizeUnit(String),
    #[error("a size is a number of bytes or a string such as \"1MiB\"")]
    SizeType,
    #[error("a size cannot be negative")]
    NegativeSize,
    #[error("a size must be more than zero")]
    ZeroSize,
    #[error("that size is too large")]
    SizeTooLarge,
}

/// Parses a duration written on the command line, e.g. `30s` or `2m`.
pub fn parse_duration_text(text: &str) -> Result<Duration, UnitError> {
    parse_duration(&toml::Value::String(text.to_owned()))
}

/// Parses a size written on the command line, e.g. `4MiB`.
pub fn parse_size_text(text: &str) -> Result<usize, UnitError> {
    parse_size(&toml::Value::String(text.to_owned()))
}

/// Parses a duration: a number of seconds, or a number with `ms`, `s`, `m` or `h`.
pub fn parse_duration(value: &toml::Value) -> Result<Duration, UnitError> {
    let seconds = match value {
        toml::Value::Integer(seconds) => f64::from(i32::try_from(*seconds).unwrap_or(i32::MAX)),
        toml::Value::Float(seconds) => *seconds,
        toml::Value::String(text) => {
            let text = text.trim();
            let split = text
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(text.len());
            let (number, unit) = text.split_at(split);
            let number: f64 = number
                .parse()
                .map_err(|_| UnitError::NotADuration(text.to_owned()))?;
            let scale = match unit.trim() {
                "ms" => 0.001,
                "s" | "" => 1.0,
                "m" => 60.0,
                "h" => 3600.0,
                other => return Err(UnitError::DurationUnit(other.to_owned())),
            };
            number * scale
        }
        _ => return Err(UnitError::DurationType),
    };
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= 7.0 * 86_400.0) {
        return Err(UnitError::DurationRange);
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Parses a size: a number of bytes, or a number with `B`, `KB`, `KiB`, `MB`, `MiB`, `GB`, `GiB`.
pub fn parse_size(value: &toml::Value) -> Result<usize, UnitError> {
    let bytes = match value {
        toml::Value::Integer(bytes) => {
            u64::try_from(*bytes).map_err(|_| UnitError::NegativeSize)?
        }
        toml::Value::String(text) => {
            let text = text.trim();
            let split = text
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(text.len());
            let (number, unit) = text.split_at(split);
            let number: u64 = number
                .parse()
                .map_err(|_| UnitError::NotASize(text.to_owned()))?;
            let scale: u64 = match unit.trim() {
                "" | "B" => 1,
                "KB" | "kB" => 1_000,
                "KiB" => 1 << 10,
                "MB" => 1_000_000,
                "MiB" => 1 << 20,
                "GB" => 1_000_000_000,
                "GiB" => 1 << 30,
                other => return Err(UnitError::SizeUnit(other.to_owned())),
            };
            number.saturating_mul(scale)
        }
        _ => return Err(UnitError::SizeType),
    };
    if bytes == 0 {
        return Err(UnitError::ZeroSize);
    }
    usize::try_from(bytes).map_err(|_| UnitError::SizeTooLarge)
}

/// A size for a person: `512 B`, `900.1 KiB`, `3.0 MiB`, `1.0 GiB`.
pub fn size_text(bytes: u64) -> String {
    const UNITS: [&str; 3] = ["KiB", "MiB", "GiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    #[expect(clippy::cast_precision_loss, reason = "one decimal is shown")]
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{parse_duration, parse_size};

    #[test]
    fn durations() {
        assert_eq!(parse_duration(&"30s".into()), Ok(Duration::from_secs(30)));
        assert_eq!(
            parse_duration(&"250ms".into()),
            Ok(Duration::from_millis(250))
        );
        assert_eq!(parse_duration(&"2m".into()), Ok(Duration::from_secs(120)));
        assert_eq!(
            parse_duration(&toml::Value::Integer(5)),
            Ok(Duration::from_secs(5))
        );
        assert_eq!(
            parse_duration(&toml::Value::Float(0.5)),
            Ok(Duration::from_millis(500))
        );
        assert!(parse_duration(&"5 fortnights".into()).is_err());
        assert!(parse_duration(&toml::Value::Integer(0)).is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size(&"1MiB".into()), Ok(1 << 20));
        assert_eq!(parse_size(&"64KB".into()), Ok(64_000));
        assert_eq!(parse_size(&toml::Value::Integer(10)), Ok(10));
        assert!(parse_size(&toml::Value::Integer(-1)).is_err());
        assert!(parse_size(&"12 parsecs".into()).is_err());
    }
}
