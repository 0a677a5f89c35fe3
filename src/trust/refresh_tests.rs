use super::*;
use crate::domain::Kind;
use crate::mdoc::testkit::{Pki, NOW};
use crate::store::sqlite::SqliteStore;
use crate::testkit::{Vical, VicalEntry as Entry, VicalPki};
use crate::trust::lists::{EU_AV_TRUSTED_LIST, MDL_VICAL};
use crate::trust::Source;
use std::path::{Path, PathBuf};

fn write(dir: &Path, name: &str, text: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/trustlist/testdata")
        .join(name)
}

async fn store(dir: &Path) -> SqliteStore {
    SqliteStore::open(dir.join("db.sqlite").to_str().unwrap())
        .await
        .unwrap()
}

#[tokio::test]
async fn each_file_gives_its_kind_and_a_vical_adds_to_mdl() {
    let dir = tempfile::tempdir().unwrap();
    let (av, iaca, listed) = (Pki::fixed(), Pki::fixed(), Pki::fixed());
    let vical_pki = VicalPki::new();
    let vical = Vical::new(vec![Entry::mdl(&listed.ca_der)]).bytes(&vical_pki);
    let files = TrustFiles {
        pem: vec![
            (Kind::EU_AV, write(dir.path(), "av.pem", &av.ca_pem)),
            (Kind::MDL, write(dir.path(), "mdl.pem", &iaca.ca_pem)),
        ],
        lists: vec![ListFiles {
            list: &MDL_VICAL,
            source: Source::File(write(dir.path(), "vical.cbor", vical)),
            signer: write(dir.path(), "vical-anchor.pem", &vical_pki.anchor_pem),
        }],
    };
    let store = store(dir.path()).await;
    let (handle, outcomes) = TrustHandle::start(files, &store, &Fetcher::default(), NOW)
        .await
        .expect("starts");
    assert!(outcomes.iter().all(|o| o.result.is_ok()), "{outcomes:?}");
    let trust = handle.current();
    assert_eq!(trust.anchors.get(Kind::MDL).map(TrustAnchors::len), Some(2));
    assert_eq!(
        trust.anchors.get(Kind::EU_AV).map(TrustAnchors::len),
        Some(1)
    );
    let origins: Vec<&str> = trust.sources.iter().map(|s| s.origin.as_str()).collect();
    assert!(origins[2].starts_with("vical:") && origins[2].ends_with("vical.cbor"));
}

use crate::mdoc::TrustAnchors;

/// 2026-06-01, inside the fixtures' validity.
const JUNE_2026: UnixTime = 1_780_272_000;

fn av_list(dir: &Path) -> (TrustFiles, PathBuf) {
    let list = dir.join("av-tl.xml");
    std::fs::copy(testdata("xmlsec-rsa-filter2-exc.xml"), &list).unwrap();
    let files = TrustFiles {
        pem: vec![],
        lists: vec![ListFiles {
            list: &EU_AV_TRUSTED_LIST,
            source: Source::File(list.clone()),
            signer: testdata("signer-ca.pem"),
        }],
    };
    (files, list)
}

fn in_force(handle: &TrustHandle) -> Option<(u64, usize)> {
    let trust = handle.current();
    trust.lists.first().map(|l| (l.sequence, l.anchors()))
}

fn reasons(outcomes: &[Outcome]) -> Vec<&'static str> {
    outcomes
        .iter()
        .map(|o| match &o.result {
            Ok(_) => "ok",
            Err(r) => r.reason.label(),
        })
        .collect()
}

#[tokio::test]
async fn a_refresh_takes_a_newer_list_and_keeps_it_against_older_or_bad_ones() {
    let dir = tempfile::tempdir().unwrap();
    let (files, list) = av_list(dir.path());
    let store = store(dir.path()).await;
    let fetcher = Fetcher::default();
    let (handle, _) = TrustHandle::start(files.clone(), &store, &fetcher, JUNE_2026)
        .await
        .unwrap();
    assert_eq!(in_force(&handle), Some((1, 2)));

    std::fs::copy(testdata("xmlsec-rsa-filter2-exc-b.xml"), &list).unwrap();
    let outcomes = handle.refresh(&store, &fetcher, JUNE_2026, false).await;
    assert_eq!(reasons(&outcomes), ["ok"]);
    assert_eq!(in_force(&handle), Some((2, 3)), "B adds a provider");

    std::fs::copy(testdata("xmlsec-rsa-filter2-exc.xml"), &list).unwrap();
    let outcomes = handle.refresh(&store, &fetcher, JUNE_2026, false).await;
    assert_eq!(reasons(&outcomes), ["older"]);
    assert_eq!(in_force(&handle), Some((2, 3)), "B stays");

    std::fs::write(&list, "garbage").unwrap();
    let outcomes = handle.refresh(&store, &fetcher, JUNE_2026, false).await;
    assert_eq!(reasons(&outcomes), ["invalid"]);
    assert_eq!(in_force(&handle), Some((2, 3)), "B stays");
    assert_eq!(
        handle.failures.snapshot(),
        vec![
            ((list.display().to_string(), "invalid"), 1),
            ((list.display().to_string(), "older"), 1)
        ]
    );
}

#[tokio::test]
async fn a_list_past_next_update_by_more_than_7_days_gives_no_anchors_even_in_force() {
    let dir = tempfile::tempdir().unwrap();
    let (files, _) = av_list(dir.path());
    let store = store(dir.path()).await;
    let fetcher = Fetcher::default();
    let (handle, _) = TrustHandle::start(files, &store, &fetcher, JUNE_2026)
        .await
        .unwrap();
    let next = handle.current().lists[0].next_update.unwrap();
    let late = next + 7 * 86_400 + 1;
    let outcomes = handle.refresh(&store, &fetcher, late, false).await;
    assert_eq!(reasons(&outcomes), ["stale"]);
    assert_eq!(in_force(&handle), None);
    assert!(handle.current().anchors.get(Kind::EU_AV).is_none());
}

#[tokio::test]
async fn an_unreadable_signer_or_a_list_file_that_fails_stops_a_start_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let (mut files, list) = av_list(dir.path());
    let store = store(dir.path()).await;
    std::fs::write(&list, "garbage").unwrap();
    let start = |files: TrustFiles| {
        let store = &store;
        async move {
            TrustHandle::start(files, store, &Fetcher::default(), JUNE_2026)
                .await
                .map(drop)
                .unwrap_err()
        }
    };
    let err = start(files.clone()).await;
    let named = format!(
        "trusted list eu-av-trusted-list {} refused (invalid)",
        list.display()
    );
    assert!(err.starts_with(&named), "{err}");
    files.lists[0].signer = dir.path().join("missing.pem");
    let err = start(files).await;
    assert!(
        err.contains("missing.pem") && err.contains("eu-av-trusted-list"),
        "{err}"
    );
}

#[tokio::test]
async fn the_next_refresh_comes_at_the_interval_or_a_next_update_if_sooner() {
    let hour = Duration::from_secs(3600);
    assert_eq!(next_wait(&Trust::default(), NOW, hour), hour);
    let dir = tempfile::tempdir().unwrap();
    let (files, _) = av_list(dir.path());
    let store = store(dir.path()).await;
    let (handle, _) = TrustHandle::start(files, &store, &Fetcher::default(), JUNE_2026)
        .await
        .unwrap();
    let trust = handle.current();
    let next = trust.lists[0].next_update.unwrap();
    assert_eq!(next_wait(&trust, next - 10, hour), Duration::from_secs(10));
    assert_eq!(next_wait(&trust, next - 7200, hour), hour);
    assert_eq!(next_wait(&trust, next, hour), hour, "past it: the interval");
}

fn stored_a(location: &str, sequence: u64) -> StoredList {
    StoredList {
        list: EU_AV_TRUSTED_LIST.name.to_owned(),
        location: location.to_owned(),
        body: std::fs::read(testdata("xmlsec-rsa-filter2-exc.xml")).unwrap(),
        sequence,
        issued: 1_767_225_600,
        next_update: Some(4_070_908_800),
        last_success: JUNE_2026 - 60,
    }
}

#[test]
fn a_database_copy_not_newer_than_the_list_in_force_is_not_verified_again() {
    let verified = |sequence| {
        let pem = std::fs::read_to_string(testdata("signer-ca.pem")).unwrap();
        let body = stored_a("l", 1).body;
        let mut v = EU_AV_TRUSTED_LIST
            .read(&body, &pem, JUNE_2026, None)
            .unwrap();
        v.sequence = sequence;
        v
    };
    let reads = std::cell::Cell::new(0);
    let read = |sequence| {
        let reads = &reads;
        move |_: &[u8]| {
            reads.set(reads.get() + 1);
            Some(verified(sequence))
        }
    };
    let copy = |sequence| Some(stored_a("l", sequence));
    // Equal to or below the one in force: it could replace nothing, so it is not read.
    assert!(newer_copy(copy(2), Some(2), read(2)).is_none());
    assert!(newer_copy(copy(1), Some(2), read(1)).is_none());
    assert_eq!(reads.get(), 0, "not verified");
    // Newer, or nothing in force (a start): verified, and taken.
    let taken = newer_copy(copy(3), Some(2), read(3)).map(|(v, at)| (v.sequence, at));
    assert_eq!(taken, Some((3, JUNE_2026 - 60)));
    assert!(newer_copy(copy(1), None, read(1)).is_some());
    assert_eq!(reads.get(), 2);
    // The body's own sequence decides: a stored number above the floor over a body at it
    // is read, and not taken.
    assert!(newer_copy(copy(3), Some(2), read(2)).is_none());
    // A copy that does not verify is not taken.
    assert!(newer_copy(copy(3), Some(2), |_| None).is_none());
}

#[tokio::test]
async fn a_source_that_does_not_answer_in_time_is_refused_for_timeout_and_the_list_stays() {
    let dir = tempfile::tempdir().unwrap();
    // Connections complete in the backlog; nothing ever answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/av-tl.xml", silent.local_addr().unwrap());
    let files = TrustFiles {
        pem: vec![],
        lists: vec![ListFiles {
            list: &EU_AV_TRUSTED_LIST,
            source: Source::parse(&url).unwrap(),
            signer: testdata("signer-ca.pem"),
        }],
    };
    let store = store(dir.path()).await;
    store.save_trust_list(stored_a(&url, 1)).await.unwrap();
    let fetcher = Fetcher::new(Duration::from_millis(300), crate::trustlist::MAX_LIST_BYTES);
    let (handle, outcomes) = TrustHandle::start(files, &store, &fetcher, JUNE_2026)
        .await
        .expect("a URL that fails does not stop a start");
    let named = format!(
        "trusted list eu-av-trusted-list {url} refused (timeout): no answer within 300ms; "
    );
    assert_eq!(reasons(&outcomes), ["timeout"]);
    assert_eq!(
        outcomes[0].line,
        format!("{named}the database's copy is in force (sequence 1, 2 anchor(s))")
    );
    assert_eq!(in_force(&handle), Some((1, 2)));
    let outcomes = handle.refresh(&store, &fetcher, JUNE_2026, false).await;
    assert_eq!(
        outcomes[0].line,
        format!("{named}sequence 1 stays in force")
    );
    assert_eq!(in_force(&handle), Some((1, 2)));
    assert_eq!(
        handle.failures.snapshot(),
        vec![((url.clone(), "timeout"), 2)]
    );
}
