//! Rows read back as records, whatever driver returned them.

use super::*;
use rusqlite::Connection;

fn one<T>(sql: &str, map: impl Fn(&dyn Columns) -> StoreResult<T>) -> StoreResult<T> {
    let conn = Connection::open_in_memory().unwrap();
    let mut stmt = conn.prepare(sql).unwrap();
    let mut rows = stmt.query([]).unwrap();
    let row = rows.next().unwrap().unwrap();
    map(row)
}

#[test]
fn invites_are_parsed_from_their_columns() {
    let r = one(
        "SELECT 'AAAAAAAAAAAAAAAAAAAAAA', '6f1d9a4e-8f0e-4c53-9d5e-6a4f4f8f2b10', NULL,
                'verified', 1, 100, 'eu-av'",
        |row| invite(row, 0),
    )
    .unwrap();
    assert_eq!(r.stored_status, Status::Verified);
    assert_eq!(r.method, Some(VerifyMethod::EU_AV));
    assert_eq!(r.custom_id, None);
}

#[test]
fn bad_stored_data_is_corrupt_not_a_panic() {
    let cases = [
        "SELECT 'short', '6f1d9a4e-8f0e-4c53-9d5e-6a4f4f8f2b10', NULL, 'pending', 0, 1, NULL",
        "SELECT 'AAAAAAAAAAAAAAAAAAAAAA', 'not-a-uuid', NULL, 'pending', 0, 1, NULL",
        "SELECT 'AAAAAAAAAAAAAAAAAAAAAA', '6f1d9a4e-8f0e-4c53-9d5e-6a4f4f8f2b10', NULL, 'gone', 0, 1, NULL",
        "SELECT 'AAAAAAAAAAAAAAAAAAAAAA', '6f1d9a4e-8f0e-4c53-9d5e-6a4f4f8f2b10', NULL, 'pending', 0, 'x', NULL",
        "SELECT 'AAAAAAAAAAAAAAAAAAAAAA', '6f1d9a4e-8f0e-4c53-9d5e-6a4f4f8f2b10', NULL, 'verified', 0, 1, 'magic'",
    ];
    for sql in cases {
        let e = one(sql, |row| invite(row, 0)).unwrap_err();
        assert!(matches!(e, StoreError::Corrupt(_)), "{sql}: {e:?}");
    }
    let e = one("SELECT 'x', 'n', 120, 1, 2, NULL", presentation_request).unwrap_err();
    assert!(matches!(e, StoreError::Corrupt(_)), "{e:?}");
    let e = one("SELECT 'a', 1, 2, 70000, NULL", attempt).unwrap_err();
    assert!(matches!(e, StoreError::Corrupt(_)), "{e:?}");
}
