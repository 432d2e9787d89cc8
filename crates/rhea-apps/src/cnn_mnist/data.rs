//! The synthetic data set: ten classes of 28 × 28 "digit-like" grey-level images with pixels
//! `0..=255` (MNIST's shape and range), deterministic from a seed. Nothing is downloaded; this
//! is **not** MNIST.
//!
//! Each class is a seven-segment digit (`0`–`9`) drawn with strokes of two or three pixels in a
//! 12 × 20 box; a sample is its class's digit at a random stroke width and intensity, slanted
//! by up to ±2 pixels over its height, shifted by up to ±3 pixels each way, with some strokes'
//! pixels dropped and Gaussian pixel noise, clipped to `0..=255`.

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

/// The image side (28 × 28 = 784 pixels).
pub const SIDE: usize = 28;
/// The pixels of an image.
pub const PIXELS: usize = SIDE * SIDE;
/// The classes.
pub const CLASSES: usize = 10;

/// Labelled images.
#[derive(Clone, Debug, Default)]
pub struct Images {
    /// One row of [`PIXELS`] values in `0..=255` per image (row-major).
    pub pixels: Vec<Vec<u8>>,
    /// The class (`0..10`) of each image.
    pub labels: Vec<usize>,
}

impl Images {
    /// The number of images.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }
}

/// The segments `a`–`g` (top, top right, bottom right, bottom, bottom left, top left, middle)
/// each digit lights.
const SEGMENTS: [[bool; 7]; 10] = [
    [true, true, true, true, true, true, false],     // 0
    [false, true, true, false, false, false, false], // 1
    [true, true, false, true, true, false, true],    // 2
    [true, true, true, true, false, false, true],    // 3
    [false, true, true, false, false, true, true],   // 4
    [true, false, true, true, false, true, true],    // 5
    [true, false, true, true, true, true, true],     // 6
    [true, true, true, false, false, false, false],  // 7
    [true, true, true, true, true, true, true],      // 8
    [true, true, true, true, false, true, true],     // 9
];

fn uniform(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn normal(rng: &mut ChaCha8Rng) -> f64 {
    // Box–Muller.
    let u = uniform(rng).max(1e-300);
    let v = uniform(rng);
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

fn int_in(rng: &mut ChaCha8Rng, lo: i64, hi: i64) -> i64 {
    lo + (rng.next_u64() % (hi - lo + 1) as u64) as i64
}

/// A deterministic stream of images.
pub struct Generator {
    rng: ChaCha8Rng,
}

impl Generator {
    /// The stream of `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// One image of class `label`.
    fn image(&mut self, label: usize) -> Vec<u8> {
        let rng = &mut self.rng;
        let width = int_in(rng, 2, 3) as f64;
        let intensity = 170.0 + 85.0 * uniform(rng);
        let slant = 4.0 * uniform(rng) - 2.0;
        let (dx, dy) = (int_in(rng, -3, 3) as f64, int_in(rng, -3, 3) as f64);
        // The box: x in [8, 20), y in [4, 24) before the shift.
        let (x0, x1, y0, ym, y1) = (8.0 + dx, 19.0 + dx, 4.0 + dy, 13.5 + dy, 23.0 + dy);
        // Segment rectangles (x from, x to, y from, y to), before the slant.
        let horizontal = |y: f64| (x0, x1, y - width / 2.0, y + width / 2.0);
        let vertical = |x: f64, ya: f64, yb: f64| (x - width / 2.0, x + width / 2.0, ya, yb);
        let rects = [
            horizontal(y0),
            vertical(x1, y0, ym),
            vertical(x1, ym, y1),
            horizontal(y1),
            vertical(x0, ym, y1),
            vertical(x0, y0, ym),
            horizontal(ym),
        ];
        let drop = 0.08 * uniform(rng);
        let mut img = vec![0.0f64; PIXELS];
        for (s, r) in rects.iter().enumerate() {
            if !SEGMENTS[label][s] {
                continue;
            }
            for (i, px) in img.iter_mut().enumerate() {
                let (x, y) = ((i % SIDE) as f64 + 0.5, (i / SIDE) as f64 + 0.5);
                // The slant moves the top to the right: x' = x − slant·(ym − y)/10.
                let xs = x - slant * (ym - y) / 10.0;
                if xs >= r.0 && xs <= r.1 && y >= r.2 && y <= r.3 {
                    *px = intensity;
                }
            }
        }
        img.iter_mut()
            .map(|px| {
                let mut v = *px;
                if v > 0.0 && uniform(rng) < drop {
                    v *= 0.3;
                }
                v += 25.0 * normal(rng);
                v.round().clamp(0.0, 255.0) as u8
            })
            .collect()
    }

    /// `count` images, the classes in turn (`0, 1, …, 9, 0, …`) in a shuffled order.
    pub fn images(&mut self, count: usize) -> Images {
        let mut labels: Vec<usize> = (0..count).map(|i| i % CLASSES).collect();
        for i in (1..labels.len()).rev() {
            let j = (self.rng.next_u64() % (i as u64 + 1)) as usize;
            labels.swap(i, j);
        }
        let pixels = labels.iter().map(|&l| self.image(l)).collect();
        Images { pixels, labels }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_deterministic_pixel_valued_and_of_every_class() {
        let a = Generator::new(7).images(40);
        let b = Generator::new(7).images(40);
        assert_eq!(a.pixels, b.pixels);
        assert_eq!(a.labels, b.labels);
        assert_ne!(a.pixels, Generator::new(8).images(40).pixels);
        for c in 0..CLASSES {
            assert_eq!(a.labels.iter().filter(|&&l| l == c).count(), 4);
        }
        let img = &a.pixels[0];
        assert_eq!(img.len(), PIXELS);
        assert!(img.iter().filter(|&&p| p > 128).count() > 30);
        assert!(img.iter().filter(|&&p| p < 64).count() > 400);
    }
}
