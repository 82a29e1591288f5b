// Client settings, kept in localStorage: placement help on, move errors off by default (HH-17,
// HH-18); sound off; "winnable deals only" (the new game dialog's choice) off.

const KEY = "solitaire.settings";
const DEFAULTS = {
  placementHelp: true, moveErrors: false, fourColor: false, sound: false, winnable: false,
  theme: "felt", speed: "normal", volume: 60, leftHanded: false, classicLetters: false, // appearance.js
};

export class Settings extends EventTarget {
  constructor() {
    super();
    this.values = { ...DEFAULTS, ...read() };
  }

  get(name) {
    return this.values[name];
  }

  set(name, value) {
    if (this.values[name] === value) return;
    this.values[name] = value;
    localStorage.setItem(KEY, JSON.stringify(this.values));
    this.dispatchEvent(new CustomEvent("change", { detail: { name, value } }));
  }
}

function read() {
  try {
    const stored = JSON.parse(localStorage.getItem(KEY) || "{}");
    return stored && typeof stored === "object" ? stored : {};
  } catch {
    return {};
  }
}
