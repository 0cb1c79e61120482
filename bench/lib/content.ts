/**
 * Plausible file contents for the generated tree. Each language has a pool of
 * pre-rendered blocks (functions, classes, rules, paragraphs...) built once from
 * the seeded PRNG; a file is a unique header plus pool blocks up to its target
 * size. A few marker identifiers are injected at known rates and counted, so
 * grep benchmarks know how many hits to expect.
 */
import { Rng } from './rng.ts';

const NOUNS = ('user account order invoice cart payment token cache config route request response handler client ' +
  'server store state event queue worker job task schema model record entry index node tree graph path file stream ' +
  'buffer chunk batch metric report filter query result error logger theme layout button modal table form field ' +
  'input list item menu panel toast avatar badge chart grid tab card profile project team member role permission ' +
  'policy plugin module asset image upload download sync diff patch commit branch merge release deploy region ' +
  'tenant webhook channel message thread comment label tag search cursor page limit offset window frame ' +
  'socket payload header cookie locale currency price discount coupon shipment address').split(' ');
const VERBS = ('get set create update delete load save parse format render validate normalize resolve fetch build ' +
  'compute merge apply register emit handle map reduce sort group flush open close read write encode decode ' +
  'sanitize compare clone watch subscribe dispatch schedule retry measure').split(' ');
const ADJS = 'active pending default current next previous raw cached stale remote local shared primary visible dirty'.split(' ');
const TS_TYPES = ['string', 'number', 'boolean', 'unknown', 'Date', 'string[]', 'number[]', 'Record<string, unknown>', 'Promise<void>', 'null'];
const LOREM = ('the a of to in for with on by from when if then this that value returns list each new old all any ' +
  'before after during every should must may will cannot without into over under between across against').split(' ');

const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1);
const snake = (s: string) => s.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());

export class Words {
  constructor(readonly rng: Rng) {}
  noun() { return this.rng.pick(NOUNS); }
  camel() {
    const verb = this.rng.pick(VERBS), noun = this.noun();
    // `fetchUser<Suffix>` is reserved for the injected regex marker.
    return verb + cap(verb === 'fetch' && noun === 'user' ? 'users' : noun) + (this.rng.chance(0.3) ? cap(this.noun()) : '');
  }
  varName() { return (this.rng.chance(0.3) ? this.rng.pick(ADJS) + cap(this.noun()) : this.noun()); }
  pascal() { return cap(this.rng.chance(0.4) ? this.rng.pick(ADJS) : this.noun()) + cap(this.noun()); }
  kebab() { return this.noun().toLowerCase() + '-' + this.noun().toLowerCase(); }
  type() { return this.rng.chance(0.3) ? this.pascal() : this.rng.pick(TS_TYPES); }
  sentence(min = 5, max = 14) {
    const n = this.rng.int(min, max);
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(this.rng.chance(0.35) ? this.noun() : this.rng.pick(this.rng.chance(0.5) ? LOREM : VERBS));
    return cap(out.join(' ')) + '.';
  }
}

export type Lang = 'ts' | 'tsx' | 'js' | 'py' | 'rs' | 'go' | 'css' | 'md' | 'txt' | 'yml' | 'sh' | 'html' | 'svg' | 'toml' | 'json' | 'snap';

type BlockGen = (w: Words) => string;
const r = (w: Words) => w.rng;

function tsBlock(w: Words, typed: boolean): string {
  const t = (s: string) => (typed ? s : '');
  const kind = r(w).int(0, 5);
  const fn = w.camel(), a = w.varName(), b = w.varName(), P = w.pascal();
  if (kind === 0 && typed) {
    const fields = Array.from({ length: r(w).int(2, 8) }, () => `  ${w.varName()}${r(w).chance(0.3) ? '?' : ''}: ${w.type()};`);
    return `export interface ${P} {\n${fields.join('\n')}\n}\n`;
  }
  if (kind === 1) {
    const methods = Array.from({ length: r(w).int(1, 4) }, () => {
      const m = w.camel(), x = w.varName();
      return `  ${m}(${x}${t(': ' + w.type())})${t(': ' + w.type())} {\n    if (!${x}) return this.${w.varName()};\n    this.${w.varName()} = ${x};\n    return ${x};\n  }`;
    });
    return `export class ${P} {\n  private ${a}${t(': ' + w.type())};\n\n${methods.join('\n\n')}\n}\n`;
  }
  if (kind === 2) {
    return `/** ${w.sentence()} */\nexport const ${fn} = async (${a}${t(': ' + P)}) => {\n  const ${b} = await ${w.camel()}(${a}.${w.varName()});\n  return { ...${a}, ${b} };\n};\n`;
  }
  if (kind === 3 && typed) return `export type ${P} = ${Array.from({ length: r(w).int(2, 5) }, () => `'${w.kebab()}'`).join(' | ')};\n`;
  return `// ${w.sentence()}\nexport function ${fn}(${a}${t(': ' + w.type())}, ${b}${t('?: ' + w.type())})${t(': ' + w.type())} {\n` +
    `  const ${w.varName()} = ${w.camel()}(${a});\n  if (${b} === undefined) {\n    throw new Error('${w.sentence(3, 7)}');\n  }\n` +
    `  for (const ${w.noun()} of ${a}.${w.varName()}s ?? []) {\n    ${w.camel()}(${b});\n  }\n  return ${b};\n}\n`;
}

function tsxBlock(w: Words): string {
  if (r(w).chance(0.4)) return tsBlock(w, true);
  const C = w.pascal(), s = w.varName(), p = w.varName();
  return `export function ${C}({ ${p}, ${w.varName()} }: ${C}Props) {\n  const [${s}, set${cap(s)}] = useState(${r(w).pick(['null', '0', 'false', "''", '[]'])});\n` +
    `  useEffect(() => {\n    ${w.camel()}(${p}).then(set${cap(s)});\n  }, [${p}]);\n  return (\n    <div className="${w.kebab()}">\n` +
    `      <${w.pascal()} ${w.varName()}={${s}} onClick={() => ${w.camel()}(${p})} />\n      <span>{${s} ? '${w.sentence(2, 5)}' : null}</span>\n    </div>\n  );\n}\n`;
}

const GENS: Record<Lang, BlockGen> = {
  ts: (w) => tsBlock(w, true),
  tsx: tsxBlock,
  js: (w) => tsBlock(w, false),
  py: (w) => r(w).chance(0.3)
    ? `class ${w.pascal()}:\n    """${w.sentence()}"""\n\n    def __init__(self, ${snake(w.varName())}):\n        self.${snake(w.varName())} = ${snake(w.varName())}\n`
    : `def ${snake(w.camel())}(${snake(w.varName())}, ${snake(w.varName())}=None):\n    """${w.sentence()}"""\n    for ${snake(w.noun())} in ${snake(w.varName())}:\n        if not ${snake(w.noun())}:\n            continue\n    return ${snake(w.varName())}\n`,
  rs: (w) => r(w).chance(0.35)
    ? `#[derive(Debug, Clone, PartialEq)]\npub struct ${w.pascal()} {\n    pub ${snake(w.varName())}: ${r(w).pick(['String', 'u64', 'usize', 'bool', 'Vec<String>', 'Option<u32>'])},\n    ${snake(w.varName())}: ${r(w).pick(['u32', 'i64', 'PathBuf', 'Arc<str>'])},\n}\n`
    : `/// ${w.sentence()}\npub fn ${snake(w.camel())}(${snake(w.varName())}: &str) -> Result<${w.pascal()}, Error> {\n    let ${snake(w.varName())} = ${snake(w.camel())}()?;\n    if ${snake(w.varName())}.is_empty() {\n        return Err(Error::${w.pascal()});\n    }\n    Ok(${w.pascal()}::default())\n}\n`,
  go: (w) => `// ${w.camel()} ${w.sentence().toLowerCase()}\nfunc ${cap(w.camel())}(ctx context.Context, ${w.varName()} string) (*${w.pascal()}, error) {\n\tif ${w.varName()} == "" {\n\t\treturn nil, fmt.Errorf("${w.sentence(3, 6)}")\n\t}\n\treturn &${w.pascal()}{}, nil\n}\n`,
  css: (w) => `.${w.kebab()}${r(w).chance(0.3) ? ' .' + w.kebab() : ''} {\n  display: ${r(w).pick(['flex', 'grid', 'block', 'inline-flex', 'none'])};\n  color: #${w.rng.hex(6)};\n  padding: ${r(w).int(0, 32)}px ${r(w).int(0, 32)}px;\n}\n`,
  md: (w) => r(w).chance(0.25)
    ? `## ${w.sentence(2, 5).slice(0, -1)}\n\n${w.sentence()} ${w.sentence()}\n\n\`\`\`ts\n${tsBlock(w, true)}\`\`\`\n`
    : `${w.sentence()} ${w.sentence()} ${w.sentence()}\n\n- ${w.sentence(3, 8)}\n- ${w.sentence(3, 8)}\n`,
  txt: (w) => `${w.sentence()} ${w.sentence()}\n`,
  yml: (w) => `${w.noun()}:\n  ${w.varName()}: ${r(w).pick(['true', 'false', String(r(w).int(1, 900)), w.kebab()])}\n  ${w.varName()}:\n    - ${w.kebab()}\n    - ${w.kebab()}\n`,
  sh: (w) => `# ${w.sentence()}\nif [ -n "\${${snake(w.varName()).toUpperCase()}:-}" ]; then\n  ${w.kebab()} --${w.noun()} "$1"\nfi\n`,
  html: (w) => `<section class="${w.kebab()}">\n  <h2>${w.sentence(2, 5)}</h2>\n  <p>${w.sentence()}</p>\n</section>\n`,
  svg: (w) => `  <path d="M${r(w).int(0, 99)} ${r(w).int(0, 99)}L${r(w).int(0, 99)} ${r(w).int(0, 99)}Z" fill="#${w.rng.hex(6)}"/>\n`,
  toml: (w) => `[${w.noun()}]\n${snake(w.varName())} = "${w.kebab()}"\n${snake(w.varName())} = ${r(w).int(0, 100)}\n`,
  json: (w) => `    "${w.varName()}": ${JSON.stringify(r(w).chance(0.5) ? w.sentence(2, 6) : r(w).int(0, 10000))},\n`,
  snap: (w) => `exports[\`${w.pascal()} ${w.sentence(3, 6).slice(0, -1)} 1\`] = \`\n<div class="${w.kebab()}">\n  ${w.sentence()}\n</div>\n\`;\n\n`,
};

const COMMENT: Partial<Record<Lang, [string, string]>> = {
  ts: ['// ', ''], tsx: ['// ', ''], js: ['// ', ''], rs: ['// ', ''], go: ['// ', ''], css: ['/* ', ' */'],
  py: ['# ', ''], sh: ['# ', ''], yml: ['# ', ''], toml: ['# ', ''], md: ['', ''], txt: ['', ''], html: ['<!-- ', ' -->'],
};
const CODE_ASSIGN: Partial<Record<Lang, string>> = { ts: '  const %s = ', tsx: '  const %s = ', js: '  const %s = ', rs: '    let %s = ', go: '\t%s := ', py: '    %s = ' };

/** Identifiers that grep benchmarks can search for, with per-file injection rates. */
export const MARKERS = {
  'TODO(perf)': 0.012,
  resolveWorkspaceRoot: 0.04,
  handleIncomingRequest: 0.07,
  DEPRECATED_API_V1: 0.006,
  'fetchUser[A-Z]\\w*': 0.03,
} as const;
export type Marker = keyof typeof MARKERS;
const FETCH_SUFFIX = ['ById', 'ByEmail', 'Profile', 'Settings', 'Avatar', 'Teams'];

function markerLine(w: Words, lang: Lang, m: Marker): string {
  const [open, close] = COMMENT[lang]!;
  if (m === 'TODO(perf)') return `${open}TODO(perf): ${w.sentence(4, 9)}${close}`;
  const ident = m === 'fetchUser[A-Z]\\w*' ? 'fetchUser' + w.rng.pick(FETCH_SUFFIX) : m;
  const assign = CODE_ASSIGN[lang];
  if (assign) return assign.replace('%s', lang === 'rs' || lang === 'py' ? snake(w.varName()) : w.varName()) + `${ident}(${w.varName()});`;
  return `${open}See ${ident} for ${w.sentence(2, 5).toLowerCase()}${close}`;
}

/** Renders files of one language from a shared block pool. */
export class ContentMaker {
  private pools = new Map<Lang, string[]>();
  constructor(private rng: Rng, private poolSize = 1500) {}

  private pool(lang: Lang): string[] {
    let p = this.pools.get(lang);
    if (!p) {
      const w = new Words(this.rng.fork(lang.length * 131 + lang.charCodeAt(0)));
      p = Array.from({ length: this.poolSize }, () => GENS[lang](w));
      this.pools.set(lang, p);
    }
    return p;
  }

  /** Returns the text and how many of each marker it contains. */
  make(w: Words, lang: Lang, targetBytes: number, markers: boolean): { text: string; hits: Partial<Record<Marker, number>> } {
    const pool = this.pool(lang);
    const parts: string[] = [header(w, lang)];
    let size = parts[0]!.length;
    while (size < targetBytes) {
      const b = w.rng.pick(pool);
      parts.push(b);
      size += b.length + 1;
    }
    const hits: Partial<Record<Marker, number>> = {};
    if (markers && COMMENT[lang]) {
      for (const m of Object.keys(MARKERS) as Marker[]) {
        if (!w.rng.chance(MARKERS[m])) continue;
        const n = w.rng.chance(0.8) ? 1 : w.rng.int(2, 4);
        for (let i = 0; i < n; i++) parts.splice(w.rng.int(1, parts.length), 0, markerLine(w, lang, m) + '\n');
        hits[m] = n;
      }
    }
    return { text: parts.join('\n') + footer(lang), hits };
  }
}

function header(w: Words, lang: Lang): string {
  switch (lang) {
    case 'ts': case 'tsx': case 'js': {
      const n = w.rng.int(1, 6);
      const lines = Array.from({ length: n }, () => `import { ${w.camel()}, ${w.pascal()} } from '${w.rng.pick(['./', '../', '@acme/'])}${w.kebab()}';`);
      if (lang === 'tsx') lines.unshift(`import { useEffect, useState } from 'react';`);
      return lines.join('\n') + '\n';
    }
    case 'rs': return `use std::path::PathBuf;\nuse crate::${snake(w.noun())}::{${w.pascal()}, Error};\n`;
    case 'go': return `package ${w.noun().toLowerCase()}\n\nimport (\n\t"context"\n\t"fmt"\n)\n`;
    case 'py': return `"""${w.sentence()}"""\nfrom __future__ import annotations\n\nimport ${snake(w.noun())}\n`;
    case 'md': return `# ${w.sentence(2, 6).slice(0, -1)}\n\n${w.sentence()}\n`;
    case 'html': return `<!doctype html>\n<html lang="en">\n<head><title>${w.sentence(2, 4)}</title></head>\n<body>\n`;
    case 'svg': return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">\n`;
    case 'json': return `{\n  "$schema": "https://json.schemastore.org/${w.kebab()}",\n  "data": {\n`;
    case 'sh': return '#!/usr/bin/env bash\nset -euo pipefail\n';
    case 'snap': return '// Vitest Snapshot v1\n\n';
    default: return '';
  }
}

function footer(lang: Lang): string {
  if (lang === 'html') return '</body>\n</html>\n';
  if (lang === 'svg') return '</svg>\n';
  if (lang === 'json') return '    "end": true\n  }\n}\n';
  return '';
}
