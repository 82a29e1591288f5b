// Short sounds made with Web Audio (no sound files): a move, a pair, a refusal and a win.
// Off by default (Settings → Sound); the audio context is made on the first sound after the
// setting is switched on, so a page never starts audio on its own.

const NOTES = {
  move: [{ freq: 520, at: 0, len: 0.06, type: "triangle", gain: 0.12 }],
  pair: [
    { freq: 660, at: 0, len: 0.08, type: "sine", gain: 0.14 },
    { freq: 990, at: 0.07, len: 0.1, type: "sine", gain: 0.12 },
  ],
  error: [{ freq: 160, at: 0, len: 0.14, type: "square", gain: 0.06 }],
  win: [
    { freq: 523, at: 0, len: 0.14, type: "triangle", gain: 0.14 },
    { freq: 659, at: 0.12, len: 0.14, type: "triangle", gain: 0.14 },
    { freq: 784, at: 0.24, len: 0.14, type: "triangle", gain: 0.14 },
    { freq: 1047, at: 0.36, len: 0.3, type: "triangle", gain: 0.14 },
  ],
};

class Sounds {
  constructor() {
    this.enabled = false;
    this.volume = 0.6;
    this.context = null;
    this.played = []; // the names played, newest last (a few, for tests and debugging)
  }

  setEnabled(on) {
    this.enabled = Boolean(on);
  }

  /** The volume, 0 to 100 (the settings' slider); 0 is silence. */
  setVolume(volume) {
    this.volume = volume / 100;
  }

  /** Play a named sound if sound is on; never throws (audio may be unavailable). */
  play(name) {
    if (!this.enabled || !NOTES[name] || this.volume <= 0) return false;
    try {
      const AudioContext = window.AudioContext || window.webkitAudioContext;
      if (!AudioContext) return false;
      this.context = this.context || new AudioContext();
      const ctx = this.context;
      if (ctx.state === "suspended") ctx.resume().catch(() => {});
      const start = ctx.currentTime + 0.01;
      for (const note of NOTES[name]) {
        const osc = ctx.createOscillator();
        const gain = ctx.createGain();
        osc.type = note.type;
        osc.frequency.value = note.freq;
        gain.gain.setValueAtTime(0, start + note.at);
        gain.gain.linearRampToValueAtTime(note.gain * this.volume * 1.6, start + note.at + 0.01);
        gain.gain.exponentialRampToValueAtTime(0.0001, start + note.at + note.len);
        osc.connect(gain).connect(ctx.destination);
        osc.start(start + note.at);
        osc.stop(start + note.at + note.len + 0.02);
      }
      this.played = [...this.played.slice(-9), name];
      return true;
    } catch {
      return false;
    }
  }
}

export const sounds = new Sounds();
