//! The synthetic data set: two classes of 14 × 14 grey-level "images", deterministic from a seed.
//!
//! Nothing is downloaded. Each class has a template made of Gaussian blobs on the 14 × 14 grid
//! (three blobs the classes share, two of each class's own), and a sample is its class template
//! at a random intensity, shifted by up to one pixel each way, plus Gaussian pixel noise of
//! standard deviation [`PIXEL_NOISE`], clipped to `[0, 1]` like pixels. The classes overlap
//! enough that logistic regression does not separate them perfectly (about 95 % held-out
//! accuracy after 32 iterations), so the accuracies of the encrypted and the f64 training say
//! something. The shape is the one Han et al. (AAAI 2019) train on — MNIST digits downsampled to
//! 14 × 14 = 196 pixels — but the data is not MNIST.

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

/// The image side (14 × 14 = 196 pixels).
pub const SIDE: usize = 14;
/// The pixels of an image.
pub const PIXELS: usize = SIDE * SIDE;
/// The standard deviation of the Gaussian noise added to every pixel.
pub const PIXEL_NOISE: f64 = 0.45;

/// Labelled samples: pixels in `[0, 1]`, labels `±1`.
#[derive(Clone, Debug)]
pub struct Samples {
    /// One row of [`PIXELS`] values per sample.
    pub x: Vec<Vec<f64>>,
    /// `+1` or `−1` per sample.
    pub y: Vec<f64>,
}

impl Samples {
    /// The number of samples.
    pub fn len(&self) -> usize {
        self.y.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }

    /// Samples `start..start + count`.
    pub fn slice(&self, start: usize, count: usize) -> Samples {
        Samples {
            x: self.x[start..start + count].to_vec(),
            y: self.y[start..start + count].to_vec(),
        }
    }

    /// `z_i = y_i · (1, x_i)`: the bias feature first, then the pixels (Han et al.'s `Z`; the
    /// gradient of the logistic loss needs only these).
    pub fn z_rows(&self) -> Vec<Vec<f64>> {
        self.x
            .iter()
            .zip(&self.y)
            .map(|(x, &y)| std::iter::once(y).chain(x.iter().map(|p| y * p)).collect())
            .collect()
    }
}

/// The generator of one data set (fixed templates, a stream of samples).
pub struct Generator {
    templates: [Vec<f64>; 2],
    rng: ChaCha8Rng,
}

/// A uniform `f64` in `[0, 1)`.
fn uniform(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (-53f64).exp2()
}

/// A standard normal `f64` (Box–Muller).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u = 1.0 - uniform(rng); // (0, 1]
    let v = uniform(rng);
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

/// A Gaussian blob on the grid: centre, width, amplitude.
struct Blob {
    cx: f64,
    cy: f64,
    width: f64,
    amplitude: f64,
}

impl Blob {
    fn random(rng: &mut ChaCha8Rng) -> Self {
        Self {
            cx: 3.0 + 8.0 * uniform(rng),
            cy: 3.0 + 8.0 * uniform(rng),
            width: 1.2 + 1.3 * uniform(rng),
            amplitude: 0.5 + 0.5 * uniform(rng),
        }
    }

    fn at(&self, x: f64, y: f64) -> f64 {
        let d2 = (x - self.cx).powi(2) + (y - self.cy).powi(2);
        self.amplitude * (-d2 / (2.0 * self.width * self.width)).exp()
    }
}

impl Generator {
    /// The generator of the data set `seed` (its templates and its sample stream).
    pub fn new(seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let shared: Vec<Blob> = (0..3).map(|_| Blob::random(&mut rng)).collect();
        let template = |rng: &mut ChaCha8Rng| {
            let own: Vec<Blob> = (0..2).map(|_| Blob::random(rng)).collect();
            (0..PIXELS)
                .map(|p| {
                    let (x, y) = ((p % SIDE) as f64, (p / SIDE) as f64);
                    let v: f64 = shared.iter().chain(&own).map(|b| b.at(x, y)).sum();
                    v.min(1.0)
                })
                .collect::<Vec<f64>>()
        };
        let templates = [template(&mut rng), template(&mut rng)];
        Self { templates, rng }
    }

    /// The next `count` samples, the classes drawn with equal probability.
    pub fn samples(&mut self, count: usize) -> Samples {
        let mut x = Vec::with_capacity(count);
        let mut y = Vec::with_capacity(count);
        for _ in 0..count {
            let class = (self.rng.next_u32() & 1) as usize;
            let intensity = 0.7 + 0.6 * uniform(&mut self.rng);
            let dx = (self.rng.next_u32() % 3) as isize - 1;
            let dy = (self.rng.next_u32() % 3) as isize - 1;
            let t = &self.templates[class];
            let image = (0..PIXELS)
                .map(|p| {
                    let (px, py) = ((p % SIDE) as isize - dx, (p / SIDE) as isize - dy);
                    let base =
                        if (0..SIDE as isize).contains(&px) && (0..SIDE as isize).contains(&py) {
                            t[py as usize * SIDE + px as usize]
                        } else {
                            0.0
                        };
                    (intensity * base + PIXEL_NOISE * normal(&mut self.rng)).clamp(0.0, 1.0)
                })
                .collect();
            x.push(image);
            y.push(if class == 1 { 1.0 } else { -1.0 });
        }
        Samples { x, y }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_is_deterministic_pixel_valued_and_has_both_classes() {
        let a = Generator::new(7).samples(200);
        let b = Generator::new(7).samples(200);
        assert_eq!(a.x, b.x);
        assert_eq!(a.y, b.y);
        assert!(a.x.iter().flatten().all(|&p| (0.0..=1.0).contains(&p)));
        let positives = a.y.iter().filter(|&&y| y > 0.0).count();
        assert!((60..140).contains(&positives), "{positives}");
        let c = Generator::new(8).samples(200);
        assert_ne!(a.x, c.x);
        let z = a.z_rows();
        assert_eq!(z[0].len(), PIXELS + 1);
        assert_eq!(z[0][0], a.y[0]);
    }
}
