//! A virtual X server (Xvfb) on a display of its own, and synthetic input on it
//! (xdotool), for the tests of user activity as a desktop reports it (the X
//! screensaver's idle time). Stopped when dropped.

#![allow(dead_code)] // Each test binary uses a different part.

use super::wait::wait_until;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running Xvfb, killed when dropped.
pub struct Xvfb {
    child: Child,
    /// Its display name (`:N`).
    pub display: String,
}

impl Xvfb {
    /// Starts Xvfb on a display number no other server holds (its lock file and socket
    /// are free), and waits (bounded) for its socket.
    pub fn start() -> Xvfb {
        let number = (90..190)
            .find(|n| {
                !Path::new(&format!("/tmp/.X{n}-lock")).exists()
                    && !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
            })
            .expect("a free X display number");
        let display = format!(":{number}");
        let child = Command::new("Xvfb")
            .args([display.as_str(), "-ac", "-nolisten", "tcp", "-screen", "0", "640x480x24"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb starts");
        let xvfb = Xvfb { child, display };
        let socket = format!("/tmp/.X11-unix/X{number}");
        wait_until("Xvfb's socket", Duration::from_secs(20), || Path::new(&socket).exists());
        xvfb
    }

    /// Moves the pointer: input as the X server sees it.
    pub fn move_pointer(&self, x: u32, y: u32) {
        let status = Command::new("xdotool")
            .args(["mousemove", &x.to_string(), &y.to_string()])
            .env("DISPLAY", &self.display)
            .status()
            .expect("xdotool runs");
        assert!(status.success(), "xdotool mousemove failed");
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
