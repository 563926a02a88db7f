//! Sets of job and file names for the scheduler RPC's lookups (which reported result is
//! this job, is this name one the reply sends): a request or a reply usually names a
//! handful, and each is looked up against every job the client holds, so a few names are
//! kept in a list and many in a hash map, behind a cheap filter that turns away, nearly
//! always, a name that is not in the set.

use std::collections::HashMap;

/// Above this many names, lookups go through a hash map.
const LIST_LIMIT: usize = 32;

/// A set of names, each with a value.
pub(crate) struct NameSet<'n, V> {
    filter: NameFilter,
    entries: Entries<'n, V>,
}

enum Entries<'n, V> {
    List(Vec<(&'n str, V)>),
    Map(HashMap<&'n str, V>),
}

impl<'n, V> NameSet<'n, V> {
    /// The set of `names`, each with `value(name)`; a name given twice keeps its first
    /// value.
    pub(crate) fn new(names: impl Iterator<Item = &'n str>, value: impl Fn() -> V) -> Self {
        let mut set = NameSet {
            filter: NameFilter([0; 4]),
            entries: Entries::List(Vec::with_capacity(names.size_hint().0.min(LIST_LIMIT))),
        };
        for name in names {
            if set.contains(name) {
                continue;
            }
            set.filter.add(name);
            match &mut set.entries {
                Entries::List(list) if list.len() < LIST_LIMIT => list.push((name, value())),
                Entries::List(list) => {
                    let mut map: HashMap<&'n str, V> = list.drain(..).collect();
                    map.insert(name, value());
                    set.entries = Entries::Map(map);
                }
                Entries::Map(map) => {
                    map.insert(name, value());
                }
            }
        }
        set
    }

    /// How many names the set has (each once).
    pub(crate) fn len(&self) -> usize {
        match &self.entries {
            Entries::List(list) => list.len(),
            Entries::Map(map) => map.len(),
        }
    }

    /// Whether the set has no names.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the set has `name`.
    #[inline(always)]
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// The value of `name`, if the set has it.
    #[inline(always)]
    pub(crate) fn get(&self, name: &str) -> Option<&V> {
        if !self.filter.may_contain(name) {
            return None;
        }
        self.find(name)
    }

    /// The value of `name`, if the set has it, to change.
    #[inline(always)]
    pub(crate) fn get_mut(&mut self, name: &str) -> Option<&mut V> {
        if !self.filter.may_contain(name) {
            return None;
        }
        self.find_mut(name)
    }

    /// The value of a name that passed the filter.
    fn find(&self, name: &str) -> Option<&V> {
        match &self.entries {
            Entries::List(list) => list.iter().find(|(n, _)| *n == name).map(|(_, v)| v),
            Entries::Map(map) => map.get(name),
        }
    }

    /// The value of a name that passed the filter, to change.
    fn find_mut(&mut self, name: &str) -> Option<&mut V> {
        match &mut self.entries {
            Entries::List(list) => list.iter_mut().find(|(n, _)| *n == name).map(|(_, v)| v),
            Entries::Map(map) => map.get_mut(name),
        }
    }

    /// The names and their values.
    pub(crate) fn into_entries(self) -> Vec<(&'n str, V)> {
        match self.entries {
            Entries::List(list) => list,
            Entries::Map(map) => map.into_iter().collect(),
        }
    }
}

/// A 256-bit filter over names: a name not in the set is told apart, nearly always, by
/// one multiplication over its length and last bytes (where names that share a prefix differ),
/// without comparing or hashing it further. A name in the set always passes.
struct NameFilter([u64; 4]);

impl NameFilter {
    fn add(&mut self, name: &str) {
        let bit = Self::bit(name);
        self.0[bit / 64] |= 1 << (bit % 64);
    }

    #[inline(always)]
    fn may_contain(&self, name: &str) -> bool {
        let bit = Self::bit(name);
        self.0[bit / 64] & (1 << (bit % 64)) != 0
    }

    /// The name's last eight bytes (for a name of four to seven, its first and last four,
    /// which overlap and so cover it whole, read as two words rather than byte by byte;
    /// for a shorter one, its bytes) and its length, mixed by one multiplication and
    /// folded to 0..256.
    #[inline(always)]
    fn bit(name: &str) -> usize {
        let bytes = name.as_bytes();
        let word = |at: usize| {
            let mut word = [0u8; 4];
            word.copy_from_slice(&bytes[at..at + 4]);
            u64::from(u32::from_le_bytes(word))
        };
        let tail = match bytes.len() {
            8.. => {
                let mut word = [0u8; 8];
                word.copy_from_slice(&bytes[bytes.len() - 8..]);
                u64::from_le_bytes(word)
            }
            4..8 => (word(0) << 32) | word(bytes.len() - 4),
            _ => bytes.iter().fold(0u64, |word, &byte| (word << 8) | u64::from(byte)),
        };
        let hash =
            (tail ^ (bytes.len() as u64).rotate_left(32)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (hash >> 56) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_and_many_names_answer_alike() {
        for count in [0usize, 1, 5, LIST_LIMIT, LIST_LIMIT + 1, 1000] {
            let names: Vec<String> = (0..count).map(|i| format!("p_{i}")).collect();
            let mut set = NameSet::new(names.iter().map(String::as_str).chain(["p_0"]), || 0u32);
            for name in &names {
                *set.get_mut(name).expect("a member") += 1;
            }
            for absent in ["p_x", "q_0", "", "p_1000000"] {
                assert!(set.get_mut(absent).is_none(), "{absent} with {count} names");
            }
            assert_eq!(set.len(), count.max(1), "p_0 once");
            let entries = set.into_entries();
            assert!(entries.iter().all(|(n, v)| *v == u32::from(names.iter().any(|m| m == n))));
        }
        assert!(NameSet::new(std::iter::empty(), || ()).is_empty());
    }
}
