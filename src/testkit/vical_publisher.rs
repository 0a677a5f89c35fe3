//! The integration tests' VICAL publisher: [`VicalPki`] and [`Vical`] on the app's clock,
//! dated `now`, with the knobs the `--mdl-vical` tests spoil.

use super::vical::{PkiSpec, Vical, VicalEntry, VicalPki, X5chain};
use super::DAY;

/// A VICAL admitting each of `iaca_roots` (DER) for mDL, signed at `now` by a fresh
/// publisher: `(vical bytes, anchor PEM)` — the `--mdl-vical` and `--mdl-vical-anchor`
/// files' contents.
pub fn mdl_vical(iaca_roots: &[Vec<u8>], now: i64) -> (Vec<u8>, String) {
    let publisher = VicalPublisher::new(now);
    let entries: Vec<VicalEntry> = iaca_roots.iter().map(|d| VicalEntry::mdl(d)).collect();
    let bytes = publisher.vical(&entries, &VicalKnobs::default());
    (bytes, publisher.anchor_pem.clone())
}

/// Ways to spoil a [`VicalPublisher`]'s VICAL; the default is a valid one.
#[derive(Clone, Debug, Default)]
pub struct VicalKnobs {
    /// Flip one bit of the signature.
    pub bad_signature: bool,
    /// No `x5chain` header: unsigned as far as the anchor can tell.
    pub no_x5chain: bool,
    /// Signed by another publisher's signer (not under this anchor), its chain sent.
    pub wrong_signer: bool,
    /// Change one byte of the payload after signing.
    pub tamper_payload: bool,
    /// Wrap in COSE_Sign1's tag 18 (valid either way).
    pub tagged: bool,
    /// The `vicalIssueID` (7 when `None`): older and newer lists.
    pub issue_id: Option<u64>,
}

/// A VICAL provider on the app's clock: its VICALs are dated `now`.
pub struct VicalPublisher {
    pki: VicalPki,
    /// The anchor CA, PEM: the `--mdl-vical-anchor` file's content.
    pub anchor_pem: String,
    pub anchor_der: Vec<u8>,
    pub signer_der: Vec<u8>,
    now: i64,
}

impl VicalPublisher {
    /// Anchor valid `now - 30d ..= now + 5y`; signer `now - 30d ..= now + 365d`, issued
    /// by the anchor directly.
    pub fn new(now: i64) -> Self {
        Self::make(now, false)
    }

    /// As [`VicalPublisher::new`], the signer issued by an intermediate CA.
    pub fn with_intermediate(now: i64) -> Self {
        Self::make(now, true)
    }

    fn spec(now: i64, intermediate: bool) -> PkiSpec {
        PkiSpec {
            intermediate,
            anchor_validity: (now - 30 * DAY, now + 5 * 365 * DAY),
            intermediate_validity: (now - 30 * DAY, now + 2 * 365 * DAY),
            signer_validity: (now - 30 * DAY, now + 365 * DAY),
            ..PkiSpec::default()
        }
    }

    fn make(now: i64, intermediate: bool) -> Self {
        Self::of(VicalPki::with(Self::spec(now, intermediate)), now)
    }

    fn of(pki: VicalPki, now: i64) -> Self {
        VicalPublisher {
            anchor_pem: pki.anchor_pem.clone(),
            anchor_der: pki.anchor_der.clone(),
            signer_der: pki.signer_der.clone(),
            pki,
            now,
        }
    }

    /// The same anchor, a new signer (issued by the anchor) valid over `[not_before,
    /// not_after]` (Unix seconds): for expired and not-yet-valid signers.
    pub fn with_signer_validity(&self, not_before: i64, not_after: i64) -> Self {
        let spec = PkiSpec {
            signer_validity: (not_before, not_after),
            ..Self::spec(self.now, false)
        };
        Self::of(self.pki.resign(&spec), self.now)
    }

    /// The signer's key.
    pub fn signer_key(&self) -> &p256::ecdsa::SigningKey {
        self.pki.signer_key()
    }

    fn list(&self, entries: &[VicalEntry]) -> Vical {
        Vical {
            provider: "agegate test VICAL provider".into(),
            date: self.now,
            next_update: self.now + 30 * DAY,
            issue_id: 7,
            ..Vical::new(entries.to_vec())
        }
    }

    /// The payload (`VICAL` map) for `entries`, dated `now`, CBOR-encoded.
    pub fn payload(&self, entries: &[VicalEntry]) -> Vec<u8> {
        self.list(entries).payload()
    }

    /// The VICAL's bytes: a COSE_Sign1 (ES256) over [`VicalPublisher::payload`].
    pub fn vical(&self, entries: &[VicalEntry], knobs: &VicalKnobs) -> Vec<u8> {
        let vical = Vical {
            bad_signature: knobs.bad_signature,
            tamper_payload: knobs.tamper_payload,
            tagged: knobs.tagged,
            issue_id: knobs.issue_id.unwrap_or(7),
            x5chain: if knobs.no_x5chain {
                X5chain::Absent
            } else {
                X5chain::Array
            },
            ..self.list(entries)
        };
        if knobs.wrong_signer {
            vical.bytes(&VicalPublisher::new(self.now).pki)
        } else {
            vical.bytes(&self.pki)
        }
    }
}
