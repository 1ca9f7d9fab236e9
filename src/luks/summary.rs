//! What a LUKS header says, as `cryptadm disk inspect` prints it: a structured `cryptsetup luksDump` without
//! secrets (no salts, digests or keys). Serialized as it is, so field names are part of the output format.

#![allow(missing_docs)] // The fields are the document's keys, named as cryptsetup's luksDump names them.

use crate::luks::{self, Volume};
use serde::Serialize;

#[derive(Serialize)]
pub struct Summary {
    path: String,
    version: u8,
    uuid: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    subsystem: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    epoch: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    header_copies: Option<Copies>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata_size: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    keyslots_size: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    flags: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    requirements: Vec<String>,
    /// A detached header (`cryptsetup luksFormat --header`): the data is on another device, so no `data`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    detached_header: bool,
    /// Absent when the data segment is in a state cryptadm does not decrypt (reencryption, integrity), or
    /// elsewhere (a detached header).
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<Data>,
    keyslots: Vec<Keyslot>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tokens: Vec<Token>,
    digests: Vec<Digest>,
}

#[derive(Serialize)]
pub struct Copies {
    primary: String,
    secondary: String,
}

#[derive(Serialize)]
pub struct Data {
    offset: u64,
    length: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    dynamic: Option<bool>,
    cipher: String,
    key_bits: u32,
    sector_size: u32,
    iv_tweak: u64,
}

#[derive(Serialize)]
pub struct Keyslot {
    id: u32,
    #[serde(rename = "type")]
    kind: String,
    key_bits: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    priority: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cipher: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cipher_key_bits: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pbkdf: Option<Pbkdf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    af_stripes: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    af_hash: Option<String>,
    area_offset: u64,
    area_length: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    digest: Option<u32>,
}

#[derive(Serialize)]
pub struct Pbkdf {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    hash: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    iterations: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    time: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    memory_kib: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    threads: Option<u32>,
}

#[derive(Serialize)]
pub struct Token {
    id: u32,
    #[serde(rename = "type")]
    kind: String,
    keyslots: Vec<u32>,
    /// For a `clevis` token, its binding (`tang URL`, `sss T of […]`), set by the caller that reads JWEs.
    #[serde(skip_serializing_if = "Option::is_none")]
    clevis: Option<String>,
    /// For a `systemd-tpm2` token, what it is sealed to (`systemd-tpm2 sha256:7 (ecc)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    tpm2: Option<String>,
}

#[derive(Serialize)]
pub struct Digest {
    id: u32,
    #[serde(rename = "type")]
    kind: String,
    hash: String,
    iterations: u32,
    keyslots: Vec<u32>,
    segments: Vec<u32>,
}

fn pbkdf(kdf: &luks::Kdf) -> Pbkdf {
    let mut p = Pbkdf { kind: kdf.name(), hash: None, iterations: None, time: None, memory_kib: None, threads: None };
    match kdf {
        luks::Kdf::Pbkdf2 { hash, iterations } => {
            p.hash = Some(hash.clone());
            p.iterations = Some(*iterations);
        }
        luks::Kdf::Argon2i { time, memory_kib, parallel } | luks::Kdf::Argon2id { time, memory_kib, parallel } => {
            p.time = Some(*time);
            p.memory_kib = Some(*memory_kib);
            p.threads = Some(*parallel);
        }
    }
    p
}

fn copy_text(problem: &Option<String>, stale: bool) -> String {
    match (problem, stale) {
        (Some(problem), _) => format!("invalid: {problem}"),
        (None, true) => "stale".into(),
        (None, false) => "ok".into(),
    }
}

impl Summary {
    /// Describes the token `id` (what a clevis token's JWE binds it to), shown beside its type.
    pub fn describe_token(&mut self, id: u32, binding: String) {
        if let Some(token) = self.tokens.iter_mut().find(|t| t.id == id) {
            token.clevis = Some(binding);
        }
    }

    /// Describes the `systemd-tpm2` token `id` (its PCRs, bank and primary key).
    pub fn describe_tpm2_token(&mut self, id: u32, description: String) {
        if let Some(token) = self.tokens.iter_mut().find(|t| t.id == id) {
            token.tpm2 = Some(description);
        }
    }
}

/// The header as `disk inspect` shows it: everything `cryptsetup luksDump` prints but salts, digests and keys.
pub fn summarize(path: String, volume: &Volume) -> Summary {
    // A header cryptadm cannot decrypt (reencryption in progress, integrity) is still shown, without `data`.
    let mut data = volume.payload().ok().map(|payload| Data {
        offset: payload.offset,
        length: payload.len,
        dynamic: None,
        cipher: payload.cipher,
        key_bits: 0,
        sector_size: payload.sector_size,
        iv_tweak: payload.iv_tweak,
    });
    let kdfs: std::collections::BTreeMap<u32, luks::Kdf> =
        volume.keyslots().into_iter().map(|k| (k.id, k.kdf)).collect();
    if let Some(h) = volume.luks1_header() {
        if let Some(data) = data.as_mut() {
            data.key_bits = h.key_bytes * 8;
        }
        let keyslots = h
            .keyslots
            .iter()
            .enumerate()
            .filter(|(_, k)| k.active)
            .map(|(i, k)| Keyslot {
                id: i as u32,
                kind: "luks1".into(),
                key_bits: h.key_bytes * 8,
                priority: None,
                cipher: None,
                cipher_key_bits: None,
                pbkdf: kdfs.get(&(i as u32)).map(pbkdf),
                af_stripes: Some(k.stripes),
                af_hash: Some(h.hash_spec.clone()),
                area_offset: u64::from(k.key_material_offset) * 512,
                area_length: k.material_sectors(h.key_bytes) * 512,
                digest: None,
            })
            .collect();
        return Summary {
            path,
            version: 1,
            uuid: h.uuid.clone(),
            label: None,
            subsystem: None,
            epoch: None,
            header_copies: None,
            metadata_size: None,
            keyslots_size: None,
            flags: vec![],
            requirements: vec![],
            detached_header: volume.is_detached_header(),
            data,
            keyslots,
            tokens: vec![],
            digests: vec![Digest {
                id: 0,
                kind: "pbkdf2".into(),
                hash: h.hash_spec.clone(),
                iterations: h.mk_digest_iterations,
                keyslots: kdfs.keys().copied().collect(),
                segments: vec![0],
            }],
        };
    }
    let h = volume.luks2_header().expect("LUKS1 or LUKS2");
    let meta = &h.meta;
    let segment = meta.segments.values().next();
    let key_bits = meta
        .segment_digest()
        .and_then(|(id, _)| {
            meta.keyslots.iter().find(|(k, _)| meta.digests[&id].keyslots.contains(k)).map(|(_, s)| s.key_size * 8)
        })
        .unwrap_or(0);
    if let Some(data) = data.as_mut() {
        data.dynamic = segment.map(|s| s.size == luks::luks2::json::SegmentSize::Dynamic);
        data.key_bits = key_bits;
    }
    let keyslots = meta
        .keyslots
        .iter()
        .map(|(id, s)| Keyslot {
            id: id.0,
            kind: s.kind.clone(),
            key_bits: s.key_size * 8,
            priority: Some(match s.priority.unwrap_or(1) {
                0 => "ignored",
                2 => "preferred",
                _ => "normal",
            }),
            cipher: s.area.encryption.clone(),
            cipher_key_bits: s.area.key_size.map(|k| k * 8),
            pbkdf: kdfs.get(&id.0).map(pbkdf),
            af_stripes: s.af.as_ref().map(|a| a.stripes),
            af_hash: s.af.as_ref().map(|a| a.hash.clone()),
            area_offset: s.area.offset.0,
            area_length: s.area.size.0,
            digest: meta.digest_of_keyslot(*id).map(|(d, _)| d.0),
        })
        .collect();
    let state = volume.copy_state();
    Summary {
        path,
        version: 2,
        uuid: h.uuid.clone(),
        label: Some(h.label.clone()),
        subsystem: Some(h.subsystem.clone()),
        epoch: Some(h.seqid),
        header_copies: Some(Copies {
            primary: copy_text(&state.primary_problem, state.stale == Some("primary")),
            secondary: copy_text(&state.secondary_problem, state.stale == Some("secondary")),
        }),
        metadata_size: Some(h.hdr_size),
        keyslots_size: Some(meta.config.keyslots_size.0),
        flags: meta.config.flags.clone().unwrap_or_default(),
        requirements: meta.config.mandatory_requirements(),
        detached_header: volume.is_detached_header(),
        data,
        keyslots,
        tokens: meta
            .tokens
            .iter()
            .map(|(id, t)| Token {
                id: id.0,
                kind: t.kind.clone(),
                keyslots: t.keyslots.iter().map(|k| k.0).collect(),
                clevis: None,
                tpm2: None,
            })
            .collect(),
        digests: meta
            .digests
            .iter()
            .map(|(id, d)| Digest {
                id: id.0,
                kind: d.kind.clone(),
                hash: d.hash.clone(),
                iterations: d.iterations,
                keyslots: d.keyslots.iter().map(|k| k.0).collect(),
                segments: d.segments.iter().map(|s| s.0).collect(),
            })
            .collect(),
    }
}
