//! Parsing of the HTTP `Retry-After` header (RFC 9110 section 10.2.3) into a duration.
//!
//! Both forms: delta-seconds, and an HTTP-date in any of the three formats a recipient must
//! accept (IMF-fixdate, the obsolete RFC 850 form and C's asctime form). Hand-written to keep
//! the core free of dependencies. An HTTP-date is compared with the wall clock because that is
//! what the server meant; the resulting duration then joins the runtime's one (tokio) clock.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Parses a `Retry-After` value relative to the current wall-clock time. A date in the past
/// means "now" (zero); anything unparseable is `None` (treated as no hint).
///
/// ```
/// use std::time::Duration;
/// use timeoutlint_retry::retry_after;
///
/// assert_eq!(retry_after::parse("120"), Some(Duration::from_secs(120)));
/// assert_eq!(retry_after::parse("Sun, 06 Nov 1994 08:49:37 GMT"), Some(Duration::ZERO));
/// assert_eq!(retry_after::parse("soon"), None);
/// ```
#[must_use]
pub fn parse(value: &str) -> Option<Duration> {
    parse_at(value, SystemTime::now())
}

/// Parses a `Retry-After` value relative to `now`.
#[must_use]
pub fn parse_at(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // Over-long numbers saturate rather than fail: the cap rejects them anyway.
        return Some(Duration::from_secs(
            value.parse::<u64>().unwrap_or(u64::MAX),
        ));
    }
    // The date is whole seconds, but `now` is not: measure from the precise instant, so a date
    // 1.244 s ahead reads as 1.244 s and not as the 2 s to the date from the second `now` is in.
    let since_epoch = now.duration_since(UNIX_EPOCH).ok()?;
    let at = parse_http_date(value, since_epoch.as_secs())?;
    Some(Duration::from_secs(at).saturating_sub(since_epoch))
}

/// Seconds since the Unix epoch of an HTTP-date in any of the three formats. `now` (seconds
/// since the epoch) resolves RFC 850's two-digit year.
#[must_use]
pub fn parse_http_date(value: &str, now: u64) -> Option<u64> {
    let (weekday, rest) = value.split_once(' ')?;
    if let Some(day_name) = weekday.strip_suffix(',') {
        if day_name.len() == 3 {
            imf_fixdate(rest)
        } else {
            rfc850(rest, now)
        }
    } else {
        asctime(rest)
    }
}

/// `06 Nov 1994 08:49:37 GMT`
fn imf_fixdate(rest: &str) -> Option<u64> {
    let mut parts = rest.split(' ');
    let day = parts.next()?;
    let month = month(parts.next()?)?;
    let year = parts.next()?;
    let time = parts.next()?;
    if parts.next()? != "GMT" || parts.next().is_some() || day.len() != 2 || year.len() != 4 {
        return None;
    }
    epoch_seconds(year.parse().ok()?, month, day.parse().ok()?, time)
}

/// `06-Nov-94 08:49:37 GMT`
fn rfc850(rest: &str, now: u64) -> Option<u64> {
    let mut parts = rest.split(' ');
    let date = parts.next()?;
    let time = parts.next()?;
    if parts.next()? != "GMT" || parts.next().is_some() {
        return None;
    }
    let mut fields = date.split('-');
    let day: u32 = fields.next()?.parse().ok()?;
    let month = month(fields.next()?)?;
    let yy = fields.next()?;
    if yy.len() != 2 || fields.next().is_some() {
        return None;
    }
    let yy: i64 = yy.parse().ok()?;
    // RFC 9110: a two-digit year more than 50 years in the future is in the past century.
    let this_year = 1970 + i64::try_from(now / 31_556_952).ok()?;
    let mut year = (this_year / 100) * 100 + yy;
    if year > this_year + 50 {
        year -= 100;
    }
    epoch_seconds(year, month, day, time)
}

/// `Nov  6 08:49:37 1994` (the day is space-padded)
fn asctime(rest: &str) -> Option<u64> {
    let mut parts = rest.split_whitespace();
    let month = month(parts.next()?)?;
    let day: u32 = parts.next()?.parse().ok()?;
    let time = parts.next()?;
    let year = parts.next()?;
    if parts.next().is_some() || year.len() != 4 {
        return None;
    }
    epoch_seconds(year.parse().ok()?, month, day, time)
}

fn month(name: &str) -> Option<u32> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let index = MONTHS.iter().position(|m| *m == name)?;
    u32::try_from(index + 1).ok()
}

fn epoch_seconds(year: i64, month: u32, day: u32, time: &str) -> Option<u64> {
    let mut hms = time.split(':');
    let h: u64 = hms.next()?.parse().ok()?;
    let m: u64 = hms.next()?.parse().ok()?;
    let s: u64 = hms.next()?.parse().ok()?;
    if hms.next().is_some() || h > 23 || m > 59 || s > 60 || !(1..=31).contains(&day) {
        return None;
    }
    let days = u64::try_from(days_from_civil(year, month, day)).ok()?;
    Some(days * 86_400 + h * 3600 + m * 60 + s)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    // 1994-11-06T08:49:37Z, the example date of RFC 9110.
    const EXAMPLE: u64 = 784_111_777;

    #[test]
    fn all_three_date_formats_agree() {
        let now = EXAMPLE;
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(EXAMPLE)
        );
        assert_eq!(
            parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT", now),
            Some(EXAMPLE)
        );
        assert_eq!(
            parse_http_date("Sun Nov  6 08:49:37 1994", now),
            Some(EXAMPLE)
        );
    }

    #[test]
    fn dates_are_relative_to_now() {
        let now = UNIX_EPOCH + Duration::from_secs(EXAMPLE - 90);
        assert_eq!(
            parse_at("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(Duration::from_secs(90))
        );
        assert_eq!(parse_at("  7 ", now), Some(Duration::from_secs(7)));
        assert_eq!(parse_at("-1", now), None);
        assert_eq!(parse_at("Sun, 06 Nov 1994 25:49:37 GMT", now), None);
        assert_eq!(parse_at("", now), None);
    }

    /// The figures of issue 16: a date 1.244 s ahead, received 0.756 s into a second, is
    /// 1.244 s away (it was read as 2 s, from the start of that second), in every date format.
    #[test]
    fn dates_are_measured_from_the_precise_current_time() {
        let now = UNIX_EPOCH + Duration::from_secs(EXAMPLE) - Duration::from_millis(1244);
        for date in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(
                parse_at(date, now),
                Some(Duration::from_millis(1244)),
                "{date}"
            );
        }
        // A date inside the current second is already due; one just past is zero, not negative.
        let now = UNIX_EPOCH + Duration::from_secs(EXAMPLE) + Duration::from_millis(300);
        assert_eq!(
            parse_at("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(Duration::ZERO)
        );
    }

    #[test]
    fn rfc850_two_digit_years_stay_within_fifty_years() {
        // 2026-01-01: "30" is 2030, "94" is 1994.
        let now = 1_767_225_600;
        let y2030 = parse_http_date("Tuesday, 01-Jan-30 00:00:00 GMT", now).unwrap();
        assert_eq!(y2030, 1_893_456_000);
        let y1994 = parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT", now).unwrap();
        assert_eq!(y1994, EXAMPLE);
    }
}
