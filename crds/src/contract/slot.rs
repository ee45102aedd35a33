//! Which share of a table one worker process owns.

/// Slot `index` of `count`: the process owns the buckets `b` with `b mod count == index`, in
/// every partition, so no key is ever written by two slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Slot {
    pub index: u32,
    pub count: u32,
}

#[derive(Debug, thiserror::Error)]
#[error("slot {index} of {count} is impossible: use --slot K --slots N with 0 <= K < N")]
pub struct SlotError {
    pub index: u32,
    pub count: u32,
}

impl Slot {
    pub fn new(index: u32, count: u32) -> Result<Self, SlotError> {
        if count == 0 || index >= count {
            return Err(SlotError { index, count });
        }
        Ok(Self { index, count })
    }

    /// The only slot of an unparallelised sync.
    pub const SINGLE: Slot = Slot { index: 0, count: 1 };

    pub fn owns_bucket(&self, bucket: i32) -> bool {
        bucket.rem_euclid(self.count as i32) as u32 == self.index
    }
}

impl std::fmt::Display for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_shared_out_without_overlap() {
        assert!(Slot::new(3, 3).is_err() && Slot::new(0, 0).is_err());
        let slots: Vec<Slot> = (0..3).map(|k| Slot::new(k, 3).unwrap()).collect();
        for bucket in 0..10 {
            assert_eq!(slots.iter().filter(|s| s.owns_bucket(bucket)).count(), 1);
        }
    }
}
