//! Engine-patch waivers `docs/waiver/<PR>.md` (spec 30 §7.4).
