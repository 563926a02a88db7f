//! The project's code-signing keys, kept in `keys/` in the project directory as BOINC
//! projects keep them: `code_sign_private` (readable by its owner only) and
//! `code_sign_public`, in BOINC's text formats. The key is made on first start from the
//! operating system's randomness. When the key changes, the old public key is kept as
//! `old_key_N` with the new key's signature by the old one as `signature_N`, so clients
//! that hold an old key are given the new one with a signature they can check (BOINC's
//! key rollover).

use super::atomic_file::write_atomically;
use super::error::ProjectServerError;
use super::signing::{CodeSignPrivateKey, SigningError, sign_key_update};
use boinc_core::protocol::code_signing::{CodeSignKey, Signature};
use std::path::{Path, PathBuf};

/// The keys' directory in the project directory.
pub(crate) const KEYS_DIR: &str = "keys";
const PRIVATE_KEY_FILE: &str = "code_sign_private";
const PUBLIC_KEY_FILE: &str = "code_sign_public";

/// How a key change is told to clients holding the old key (for tests of clients:
/// only `Signed` is what a real project does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RolloverSignature {
    /// The new key signed by the old one.
    Signed,
    /// No signature at all.
    None,
    /// A signature that does not verify.
    Bad,
}

/// A key the project used before, and what tells its holders about the current one.
#[derive(Debug, Clone)]
struct OldKey {
    public: CodeSignKey,
    signature: Option<Signature>,
}

/// The project's keys.
#[derive(Debug, Clone)]
pub(crate) struct ProjectKeys {
    dir: PathBuf,
    current: CodeSignPrivateKey,
    old: Vec<OldKey>,
}

impl ProjectKeys {
    /// Loads the keys in `project_dir`, making a key on first start.
    pub(crate) fn load_or_create(project_dir: &Path) -> Result<ProjectKeys, ProjectServerError> {
        let dir = project_dir.join(KEYS_DIR);
        let key_error = |path: PathBuf, reason: String| ProjectServerError::Key { path, reason };
        let current = load_or_create_key(
            &dir,
            PRIVATE_KEY_FILE,
            PUBLIC_KEY_FILE,
            "the project's code-signing key",
            key_error,
        )?;
        let mut old = Vec::new();
        for n in 0.. {
            let key_path = dir.join(format!("old_key_{n}"));
            let text = match std::fs::read_to_string(&key_path) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                Err(e) => return Err(ProjectServerError::io(&key_path)(e)),
            };
            let public = CodeSignKey::parse(&text).map_err(|e| ProjectServerError::Key {
                path: key_path.clone(),
                reason: e.to_string(),
            })?;
            let signature_path = dir.join(format!("signature_{n}"));
            let signature = match std::fs::read_to_string(&signature_path) {
                Ok(text) => Some(Signature::parse(&text).map_err(|e| ProjectServerError::Key {
                    path: signature_path.clone(),
                    reason: e.to_string(),
                })?),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(ProjectServerError::io(&signature_path)(e)),
            };
            old.push(OldKey { public, signature });
        }
        Ok(ProjectKeys { dir, current, old })
    }

    /// The current private key.
    pub(crate) fn private(&self) -> &CodeSignPrivateKey {
        &self.current
    }

    /// The current public key.
    pub(crate) fn public(&self) -> &CodeSignKey {
        self.current.public_key()
    }

    /// What to tell a client that holds `held` (its `<code_sign_key>`, if any): the
    /// current key, and a signature when the client holds an old key the project signed
    /// the change from. `None`: the client holds the current key.
    pub(crate) fn for_client(&self, held: Option<&str>) -> Option<(String, Option<String>)> {
        let key_text = self.public().to_text();
        let Some(held) = held.map(str::trim).filter(|k| !k.is_empty()) else {
            return Some((key_text, None));
        };
        let held = CodeSignKey::parse(held).ok();
        if held.as_ref() == Some(self.public()) {
            return None;
        }
        let signature = held
            .and_then(|held| self.old.iter().find(|old| old.public == held))
            .and_then(|old| old.signature.as_ref())
            .map(Signature::to_text);
        Some((key_text, signature))
    }

    /// Replaces the key with a new one; clients holding the old key are told with
    /// `signature`. Returns the new public key.
    pub(crate) fn rotate(
        &mut self,
        signature: RolloverSignature,
    ) -> Result<CodeSignKey, ProjectServerError> {
        let private_path = self.dir.join(PRIVATE_KEY_FILE);
        let key_error = |e: SigningError| ProjectServerError::Key {
            path: private_path.clone(),
            reason: e.to_string(),
        };
        let new = CodeSignPrivateKey::generate().map_err(key_error)?;
        let old_public = self.public().clone();
        let signed = sign_key_update(&self.current, new.public_key()).map_err(key_error)?;
        let signature = match signature {
            RolloverSignature::Signed => Some(signed),
            RolloverSignature::None => None,
            RolloverSignature::Bad => {
                // The change signed by the new key itself: well-formed, never valid.
                Some(sign_key_update(&new, new.public_key()).map_err(key_error)?)
            }
        };
        let n = self.old.len();
        let key_path = self.dir.join(format!("old_key_{n}"));
        write_atomically(&key_path, old_public.to_text().as_bytes(), 0o644)
            .map_err(ProjectServerError::io(&key_path))?;
        if let Some(signature) = &signature {
            let path = self.dir.join(format!("signature_{n}"));
            write_atomically(&path, signature.to_text().as_bytes(), 0o644)
                .map_err(ProjectServerError::io(&path))?;
        }
        write_key_pair(&self.dir, PRIVATE_KEY_FILE, PUBLIC_KEY_FILE, &new)?;
        // Holders of any older key can only be given the change from the key before
        // this one: their keys' signatures are of an older change.
        self.old.push(OldKey { public: old_public, signature });
        self.current = new;
        Ok(self.public().clone())
    }
}

/// Loads the private key `private_name` in the keys directory `dir`, or, when there is
/// none, makes one from the operating system's randomness and writes it with its public
/// half (`public_name`). `what` names the key in the log; `error` makes the error for a
/// key that cannot be read or made (the caller's, as what to do differs by key).
pub(crate) fn load_or_create_key(
    dir: &Path,
    private_name: &str,
    public_name: &str,
    what: &str,
    error: impl Fn(PathBuf, String) -> ProjectServerError,
) -> Result<CodeSignPrivateKey, ProjectServerError> {
    std::fs::create_dir_all(dir).map_err(ProjectServerError::io(dir))?;
    let private_path = dir.join(private_name);
    match std::fs::read_to_string(&private_path) {
        Ok(text) => {
            CodeSignPrivateKey::parse(&text).map_err(|e| error(private_path.clone(), e.to_string()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let key = CodeSignPrivateKey::generate()
                .map_err(|e| error(private_path.clone(), e.to_string()))?;
            write_key_pair(dir, private_name, public_name, &key)?;
            tracing::info!(path = %private_path.display(), "made {what}");
            Ok(key)
        }
        Err(e) => Err(ProjectServerError::io(&private_path)(e)),
    }
}

/// Writes a key pair: the private key readable by its owner only.
fn write_key_pair(
    dir: &Path,
    private_name: &str,
    public_name: &str,
    key: &CodeSignPrivateKey,
) -> Result<(), ProjectServerError> {
    let private_path = dir.join(private_name);
    write_atomically(&private_path, key.to_text().as_bytes(), 0o600)
        .map_err(ProjectServerError::io(&private_path))?;
    let public_path = dir.join(public_name);
    write_atomically(&public_path, key.public_key().to_text().as_bytes(), 0o644)
        .map_err(ProjectServerError::io(&public_path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use boinc_core::protocol::code_signing::{KeyUpdate, check_key_update};
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_key_is_made_once_kept_private_and_rolled_over_with_a_signature() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut keys = ProjectKeys::load_or_create(dir.path()).expect("made");
        let private = dir.path().join(KEYS_DIR).join(PRIVATE_KEY_FILE);
        let mode = std::fs::metadata(&private).expect("exists").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let again = ProjectKeys::load_or_create(dir.path()).expect("loaded");
        assert_eq!(again.public(), keys.public());
        let first = keys.public().clone();
        assert_eq!(keys.for_client(None), Some((first.to_text(), None)));
        assert_eq!(keys.for_client(Some(&first.to_text())), None);

        let second = keys.rotate(RolloverSignature::Signed).expect("rotated");
        let (key, signature) = keys.for_client(Some(&first.to_text())).expect("told");
        let signature = Signature::parse(&signature.expect("signed")).expect("reads");
        let offered = CodeSignKey::parse(&key).expect("reads");
        assert_eq!(
            check_key_update(Some(&first), offered, Some(&signature)),
            Ok(KeyUpdate::Replace(second.clone()))
        );
        // The rollover survives a restart.
        let reloaded = ProjectKeys::load_or_create(dir.path()).expect("reloaded");
        assert_eq!(reloaded.public(), &second);
        assert_eq!(
            reloaded.for_client(Some(&first.to_text())).map(|(_, s)| s.is_some()),
            Some(true)
        );

        keys.rotate(RolloverSignature::None).expect("rotated");
        let (_, signature) = keys.for_client(Some(&second.to_text())).expect("told");
        assert_eq!(signature, None);
    }
}
