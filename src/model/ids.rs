//! Typed indices into the vectors of [`super::ClientState`]. Indices instead of pointers
//! keep the model plain data: cheap to clone for a what-if simulation, easy to serialise.

use serde::{Deserialize, Serialize};

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub struct $name(pub u32);

        impl $name {
            /// The position in its vector.
            pub fn index(self) -> usize {
                self.0 as usize
            }
            /// The id of the element at a position.
            pub fn from_index(index: usize) -> Self {
                $name(index as u32)
            }
        }
    };
}

id_type!(
    /// Index of a project in [`super::ClientState::projects`].
    ProjectId
);
id_type!(
    /// Index of an app in [`super::ClientState::apps`].
    AppId
);
id_type!(
    /// Index of an app version in [`super::ClientState::app_versions`].
    AppVersionId
);
id_type!(
    /// Index of a workunit in [`super::ClientState::workunits`].
    WorkunitId
);
id_type!(
    /// Index of a job (BOINC's "result") in [`super::ClientState::jobs`].
    JobId
);
id_type!(
    /// Index of a file in [`super::ClientState::files`].
    FileId
);
