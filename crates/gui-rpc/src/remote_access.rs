//! Who may connect to the GUI RPC port (docs/design.md "Protocol facts", GUI RPC): local
//! clients always; other hosts only when the user says so, by listing them in the data
//! directory's remote_hosts.cfg (one name or address per line, `#` and `;` comments) or
//! with cc_config.xml's `<allow_remote_gui_rpc>` (any host). Remote clients must
//! authenticate before anything, and never without a password.

use super::error::GuiRpcError;
use std::io::ErrorKind;
use std::net::IpAddr;
use std::path::Path;

/// The remote hosts file's name, in the data directory.
pub const REMOTE_HOSTS_FILE: &str = "remote_hosts.cfg";

/// The largest remote hosts file read, bytes.
const MAX_REMOTE_HOSTS_FILE: u64 = 1 << 20;
/// The most entries taken from it (each may cost a name lookup at start).
const MAX_REMOTE_HOSTS: usize = 256;

/// Which hosts besides this one may connect.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RemoteAccess {
    /// Any host may (`<allow_remote_gui_rpc>`).
    pub any_host: bool,
    /// These hosts may.
    pub hosts: Vec<IpAddr>,
}

/// The entries of a remote_hosts.cfg: names or addresses, without comments and blanks.
pub fn remote_host_entries(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#') && !line.starts_with(';'))
        .map(str::to_string)
        .collect()
}

/// Whether a client at `peer` is on this host.
pub fn is_local(peer: IpAddr) -> bool {
    canonical(peer).is_loopback()
}

/// An address as the comparison needs it: an IPv4 address mapped into IPv6 is the
/// IPv4 address.
fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        v4 => v4,
    }
}

/// The text of the file at `path`, refused when larger than [`MAX_REMOTE_HOSTS_FILE`].
async fn read_bounded(path: &Path) -> std::io::Result<String> {
    use tokio::io::AsyncReadExt;
    let mut bytes = Vec::new();
    let file = tokio::fs::File::open(path).await?;
    file.take(MAX_REMOTE_HOSTS_FILE + 1).read_to_end(&mut bytes).await?;
    if bytes.len() as u64 > MAX_REMOTE_HOSTS_FILE {
        return Err(std::io::Error::new(
            ErrorKind::InvalidData,
            format!("larger than {MAX_REMOTE_HOSTS_FILE} bytes: list one host per line"),
        ));
    }
    String::from_utf8(bytes).map_err(|e| std::io::Error::new(ErrorKind::InvalidData, e))
}

impl RemoteAccess {
    /// Reads `dir`'s remote_hosts.cfg (none: local only), resolving names; a name that
    /// does not resolve is left out with a warning.
    pub async fn load(dir: &Path, any_host: bool) -> Result<Self, GuiRpcError> {
        let path = dir.join(REMOTE_HOSTS_FILE);
        let text = match read_bounded(&path).await {
            Ok(text) => text,
            Err(e) if e.kind() == ErrorKind::NotFound => String::new(),
            Err(source) => return Err(GuiRpcError::RemoteHostsFile { path, source }),
        };
        let entries = remote_host_entries(&text);
        if entries.len() > MAX_REMOTE_HOSTS {
            tracing::warn!(
                entries = entries.len(),
                "remote_hosts.cfg lists more than {MAX_REMOTE_HOSTS} hosts; the rest are ignored"
            );
        }
        let mut hosts = Vec::new();
        for entry in entries.into_iter().take(MAX_REMOTE_HOSTS) {
            if let Ok(address) = entry.parse::<IpAddr>() {
                hosts.push(canonical(address));
                continue;
            }
            match tokio::net::lookup_host((entry.as_str(), 0)).await {
                Ok(addresses) => hosts.extend(addresses.map(|a| canonical(a.ip()))),
                Err(error) => {
                    tracing::warn!(host = %entry, %error, "remote_hosts.cfg names a host that does not resolve; ignored")
                }
            }
        }
        Ok(RemoteAccess { any_host, hosts })
    }

    /// Whether the server must listen beyond the loopback interface.
    pub fn listens_remotely(&self) -> bool {
        self.any_host || !self.hosts.is_empty()
    }

    /// Whether a client at `peer` may connect.
    pub fn allows(&self, peer: IpAddr) -> bool {
        is_local(peer) || self.any_host || self.hosts.contains(&canonical(peer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_skip_comments_and_blanks() {
        let text = "# farm\n192.168.1.20\n\n ; old\n  monitor.example.org  \n";
        assert_eq!(remote_host_entries(text), ["192.168.1.20", "monitor.example.org"]);
    }

    #[test]
    fn local_always_listed_hosts_only_otherwise() {
        let local_only = RemoteAccess::default();
        assert!(!local_only.listens_remotely());
        assert!(local_only.allows("127.0.0.1".parse().expect("ip")));
        assert!(local_only.allows("::1".parse().expect("ip")));
        assert!(local_only.allows("::ffff:127.0.0.1".parse().expect("ip")));
        assert!(!local_only.allows("192.168.1.20".parse().expect("ip")));
        let listed =
            RemoteAccess { any_host: false, hosts: vec!["192.168.1.20".parse().expect("ip")] };
        assert!(listed.listens_remotely());
        assert!(listed.allows("::ffff:192.168.1.20".parse().expect("ip")));
        assert!(!listed.allows("192.168.1.21".parse().expect("ip")));
        let any = RemoteAccess { any_host: true, hosts: Vec::new() };
        assert!(any.allows("10.0.0.1".parse().expect("ip")));
    }

    #[tokio::test]
    async fn the_file_is_bounded_in_size_and_entries() {
        let dir = tempfile::tempdir().expect("temp dir");
        let many: String = (0..1000).map(|i| format!("10.0.{}.{}\n", i / 256, i % 256)).collect();
        std::fs::write(dir.path().join(REMOTE_HOSTS_FILE), many).expect("write");
        let access = RemoteAccess::load(dir.path(), false).await.expect("read");
        assert_eq!(access.hosts.len(), MAX_REMOTE_HOSTS);
        let huge = "# comment\n".repeat(MAX_REMOTE_HOSTS_FILE as usize / 10 + 1);
        std::fs::write(dir.path().join(REMOTE_HOSTS_FILE), huge).expect("write");
        let error = RemoteAccess::load(dir.path(), false).await.expect_err("too large");
        assert!(error.to_string().contains("larger than"), "{error}");
    }

    #[tokio::test]
    async fn the_file_is_read_and_names_resolved() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert_eq!(
            RemoteAccess::load(dir.path(), false).await.expect("no file"),
            RemoteAccess::default()
        );
        std::fs::write(
            dir.path().join(REMOTE_HOSTS_FILE),
            "10.1.2.3\nlocalhost\nno-such-host.invalid\n",
        )
        .expect("write");
        let access = RemoteAccess::load(dir.path(), false).await.expect("read");
        assert!(access.hosts.contains(&"10.1.2.3".parse().expect("ip")));
        assert!(access.hosts.iter().any(|h| h.is_loopback()), "{access:?}");
    }
}
