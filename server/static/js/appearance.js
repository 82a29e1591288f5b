// How the client looks and sounds, from the settings (docs/browser.md, "Settings"): the theme
// (the table's felt and the cards' back, or high contrast), the speed of the card motion, the
// volume of the sounds, a left-handed layout (the piles, cells and buttons on the left), and the
// cards' letters (the language's own, or A J Q K).

import { setMotionScale } from "./animate.js";
import { useClassicLetters } from "./cards.js";
import { sounds } from "./sound.js";

export const THEMES = ["felt", "ocean", "wine", "contrast"];
export const SPEEDS = { slow: 2, normal: 1, fast: 0.5, off: 0 }; // times the usual durations

/** Apply the settings now and whenever one changes; wire the settings dialog's controls. */
export function installAppearance(settings) {
  useClassicLetters(() => Boolean(settings.get("classicLetters"))); // read as each face is drawn
  const apply = () => {
    const root = document.documentElement;
    const theme = THEMES.includes(settings.get("theme")) ? settings.get("theme") : THEMES[0];
    root.dataset.theme = theme;
    root.dataset.hand = settings.get("leftHanded") ? "left" : "right";
    const speed = settings.get("speed") in SPEEDS ? settings.get("speed") : "normal";
    setMotionScale(SPEEDS[speed]);
    sounds.setVolume(volumeOf(settings));
    const contrast = theme === "contrast";
    document.querySelector('meta[name="theme-color"]')?.setAttribute("content", contrast ? "#000000" : "#0d3b2a");
  };
  apply();
  settings.addEventListener("change", apply);
  for (const control of document.querySelectorAll("#form-settings [data-setting]")) {
    const name = control.dataset.setting;
    const read = () => (control.type === "range" ? Number(control.value) : control.value);
    const show = () => {
      control.value = String(name === "volume" ? volumeOf(settings) : settings.get(name));
    };
    show();
    control.addEventListener("input", () => settings.set(name, read()));
    settings.addEventListener("change", show);
  }
}

function volumeOf(settings) {
  const value = Number(settings.get("volume"));
  return Number.isFinite(value) ? Math.max(0, Math.min(100, value)) : 60;
}
