// A line chart as a PNG, with nothing but node:zlib: an RGB canvas, straight lines, a 3x5 digit font for
// the axis figures, one colour per series and a legend of coloured squares (the series' names go in the
// caption the caller prints). Enough for the soak run's memory curves without a plotting dependency.

import { deflateSync } from 'node:zlib'

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})
function crc32(bytes) {
  let c = 0xffffffff
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

function chunk(type, data) {
  const out = Buffer.alloc(12 + data.length)
  out.writeUInt32BE(data.length, 0)
  out.write(type, 4, 'ascii')
  data.copy(out, 8)
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length)
  return out
}

// 3x5 glyphs, rows top to bottom, 3 bits each
const GLYPHS = {
  0: [7, 5, 5, 5, 7], 1: [2, 6, 2, 2, 7], 2: [7, 1, 7, 4, 7], 3: [7, 1, 7, 1, 7], 4: [5, 5, 7, 1, 1],
  5: [7, 4, 7, 1, 7], 6: [7, 4, 7, 5, 7], 7: [7, 1, 1, 1, 1], 8: [7, 5, 7, 5, 7], 9: [7, 5, 7, 1, 7], '.': [0, 0, 0, 0, 2],
}

export const COLOURS = [[31, 119, 180], [214, 39, 40], [44, 160, 44], [255, 127, 14], [148, 103, 189], [140, 86, 75], [227, 119, 194], [23, 190, 207]]

class Canvas {
  constructor(width, height) {
    this.width = width
    this.height = height
    this.pixels = Buffer.alloc(width * height * 3, 255)
  }

  set(x, y, [r, g, b]) {
    x = Math.round(x)
    y = Math.round(y)
    if (x < 0 || y < 0 || x >= this.width || y >= this.height) return
    const i = (y * this.width + x) * 3
    this.pixels[i] = r
    this.pixels[i + 1] = g
    this.pixels[i + 2] = b
  }

  line(x0, y0, x1, y1, colour, thick = 1) {
    const steps = Math.max(Math.abs(x1 - x0), Math.abs(y1 - y0), 1)
    for (let i = 0; i <= steps; i++) {
      const x = x0 + ((x1 - x0) * i) / steps
      const y = y0 + ((y1 - y0) * i) / steps
      for (let d = 0; d < thick; d++) this.set(x, y + d, colour)
    }
  }

  text(x, y, text, colour = [0, 0, 0], scale = 2) {
    for (const ch of String(text)) {
      const glyph = GLYPHS[ch]
      if (glyph !== undefined) {
        glyph.forEach((row, r) => {
          for (let c = 0; c < 3; c++) {
            if (row & (4 >> c)) for (let sx = 0; sx < scale; sx++) for (let sy = 0; sy < scale; sy++) this.set(x + c * scale + sx, y + r * scale + sy, colour)
          }
        })
      }
      x += 4 * scale
    }
  }

  png() {
    const raw = Buffer.alloc((this.width * 3 + 1) * this.height)
    for (let y = 0; y < this.height; y++) {
      raw[y * (this.width * 3 + 1)] = 0
      this.pixels.copy(raw, y * (this.width * 3 + 1) + 1, y * this.width * 3, (y + 1) * this.width * 3)
    }
    const header = Buffer.alloc(13)
    header.writeUInt32BE(this.width, 0)
    header.writeUInt32BE(this.height, 4)
    header[8] = 8 // bit depth
    header[9] = 2 // RGB
    return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))])
  }
}

/**
 * @param {{x: number[], series: Array<{values: number[]}>, width?: number, height?: number}} chart
 *   x in minutes, values in MiB; the y axis starts at 0. Tick labels: minutes along x, MiB along y.
 * @returns {Buffer} the PNG
 */
export function plotLines({ x, series, width = 900, height = 420 }) {
  const c = new Canvas(width, height)
  const left = 60
  const right = width - 140
  const top = 20
  const bottom = height - 40
  const xMax = Math.max(...x, 1)
  const yMax = Math.max(...series.flatMap((s) => s.values), 1) * 1.1
  const px = (v) => left + ((right - left) * v) / xMax
  const py = (v) => bottom - ((bottom - top) * v) / yMax
  const grey = [200, 200, 200]
  for (let i = 0; i <= 5; i++) {
    const v = (yMax * i) / 5
    c.line(left, py(v), right, py(v), grey)
    c.text(4, py(v) - 5, v.toFixed(0))
  }
  for (let i = 0; i <= 6; i++) {
    const v = (xMax * i) / 6
    c.line(px(v), top, px(v), bottom, grey)
    c.text(px(v) - 8, bottom + 10, v.toFixed(v < 10 ? 1 : 0))
  }
  c.line(left, bottom, right, bottom, [0, 0, 0])
  c.line(left, top, left, bottom, [0, 0, 0])
  series.forEach((s, k) => {
    const colour = COLOURS[k % COLOURS.length]
    for (let i = 1; i < s.values.length; i++) c.line(px(x[i - 1]), py(s.values[i - 1]), px(x[i]), py(s.values[i]), colour, 2)
    // legend: a square per series, in order, with its index
    const ly = top + k * 22
    for (let dx = 0; dx < 14; dx++) for (let dy = 0; dy < 14; dy++) c.set(right + 20 + dx, ly + dy, colour)
    c.text(right + 42, ly + 2, String(k + 1))
  })
  return c.png()
}
