// A small, safe expression language for breakpoint conditions, logpoints, watch and the debug
// console: `reward > 0`, `'open' in action`, `min_logprob < -5`, `tips_retrieved == 0`,
// `score_changed and not corrected`, `tokens[0].logprob`, `len(tips)`.
//
// Parsed by hand (a Pratt parser) and evaluated over a plain object of turn variables: no
// `eval`, no `Function`, no property lookups outside own data properties of that object, so a
// condition typed into the gutter can read a turn and do nothing else. Python-flavoured words
// (and, or, not, in, True, False, None) and their JavaScript spellings (&&, ||, !) both work,
// since researchers write either.

import { fixed } from '../common/quantities';

export type Value = number | string | boolean | null | Value[] | { readonly [key: string]: Value };

export class ExpressionError extends Error {}

type Node =
  | { kind: 'literal'; value: Value }
  | { kind: 'name'; name: string }
  | { kind: 'unary'; op: string; operand: Node }
  | { kind: 'binary'; op: string; left: Node; right: Node }
  | { kind: 'member'; object: Node; property: Node }
  | { kind: 'call'; name: string; args: Node[] };

interface Token {
  readonly kind: 'number' | 'string' | 'name' | 'op' | 'end';
  readonly text: string;
  readonly at: number;
}

const own = (table: object, key: string): boolean => Object.prototype.hasOwnProperty.call(table, key);
const WORD_OPS: Readonly<Record<string, string>> = { and: '&&', or: '||', not: '!', in: 'in' };
const CONSTANTS: Readonly<Record<string, Value>> = {
  true: true,
  false: false,
  True: true,
  False: false,
  None: null,
  null: null,
};
// Longest first, where one symbol starts another ('<=' before '<').
const SYMBOLS = '== != <= >= && || < > ! + - * / % ( ) [ ] . ,'.split(' ');
// Binding power of each infix operator: higher binds tighter.
const INFIX: Readonly<Record<string, number>> = {
  '||': 1,
  '&&': 2,
  in: 4,
  '==': 4,
  '!=': 4,
  '<': 4,
  '<=': 4,
  '>': 4,
  '>=': 4,
  '+': 5,
  '-': 5,
  '*': 6,
  '/': 6,
  '%': 6,
};
const MAX_LENGTH = 1000;

function tokenize(source: string): Token[] {
  if (source.length > MAX_LENGTH) {
    throw new ExpressionError(`an expression is at most ${MAX_LENGTH} characters`);
  }
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const number = /^(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?)/i.exec(source.slice(i));
    if (number) {
      tokens.push({ kind: 'number', text: number[0], at: i });
      i += number[0].length;
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      let text = '';
      while (j < source.length && source[j] !== c) {
        if (source[j] === '\\' && j + 1 < source.length) {
          j++;
        }
        text += source[j];
        j++;
      }
      if (j >= source.length) {
        throw new ExpressionError(`unterminated string at column ${i + 1}`);
      }
      tokens.push({ kind: 'string', text, at: i });
      i = j + 1;
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(i));
    if (word) {
      const op = own(WORD_OPS, word[0]) ? WORD_OPS[word[0]] : undefined;
      tokens.push(op ? { kind: 'op', text: op, at: i } : { kind: 'name', text: word[0], at: i });
      i += word[0].length;
      continue;
    }
    const symbol = SYMBOLS.find((s) => source.startsWith(s, i));
    if (!symbol) {
      throw new ExpressionError(`unexpected '${c}' at column ${i + 1}`);
    }
    tokens.push({ kind: 'op', text: symbol, at: i });
    i += symbol.length;
  }
  tokens.push({ kind: 'end', text: '', at: source.length });
  return tokens;
}

class Parser {
  private position = 0;
  constructor(private readonly tokens: Token[]) {}

  parse(): Node {
    const node = this.expression(0);
    const next = this.peek();
    if (next.kind !== 'end') {
      throw new ExpressionError(`unexpected '${next.text}' at column ${next.at + 1}`);
    }
    return node;
  }

  private peek(): Token {
    return this.tokens[this.position];
  }

  private take(): Token {
    return this.tokens[this.position++];
  }

  private expect(text: string): void {
    const token = this.take();
    if (token.kind !== 'op' || token.text !== text) {
      throw new ExpressionError(`expected '${text}' at column ${token.at + 1}`);
    }
  }

  private expression(minPower: number): Node {
    let left = this.prefix();
    for (;;) {
      const token = this.peek();
      if (token.kind === 'op' && token.text === '!' && this.tokens[this.position + 1]?.text === 'in') {
        // `not in`
        this.position += 2;
        left = {
          kind: 'unary',
          op: '!',
          operand: { kind: 'binary', op: 'in', left, right: this.expression(INFIX.in + 1) },
        };
        continue;
      }
      const power = token.kind === 'op' && own(INFIX, token.text) ? INFIX[token.text] : undefined;
      if (power === undefined || power <= minPower) {
        return left;
      }
      this.take();
      left = { kind: 'binary', op: token.text, left, right: this.expression(power) };
    }
  }

  private prefix(): Node {
    const token = this.take();
    let node: Node;
    if (token.kind === 'number') {
      node = { kind: 'literal', value: Number(token.text) };
    } else if (token.kind === 'string') {
      node = { kind: 'literal', value: token.text };
    } else if (token.kind === 'name') {
      if (own(CONSTANTS, token.text)) {
        node = { kind: 'literal', value: CONSTANTS[token.text] };
      } else if (this.peek().text === '(' && this.peek().kind === 'op') {
        this.take();
        const args: Node[] = [];
        if (this.peek().text !== ')') {
          do {
            args.push(this.expression(0));
          } while (this.peek().text === ',' && this.take());
        }
        this.expect(')');
        node = { kind: 'call', name: token.text, args };
      } else {
        node = { kind: 'name', name: token.text };
      }
    } else if (token.kind === 'op' && (token.text === '!' || token.text === '-')) {
      // `not` binds looser than comparisons (Python); unary minus tighter than anything.
      node = { kind: 'unary', op: token.text, operand: this.expression(token.text === '!' ? 3 : 7) };
    } else if (token.kind === 'op' && token.text === '(') {
      node = this.expression(0);
      this.expect(')');
    } else {
      throw new ExpressionError(
        token.kind === 'end' ? 'the expression ends too early' : `unexpected '${token.text}' at column ${token.at + 1}`,
      );
    }
    return this.postfix(node);
  }

  private postfix(node: Node): Node {
    for (;;) {
      const token = this.peek();
      if (token.kind === 'op' && token.text === '.') {
        this.take();
        const name = this.take();
        if (name.kind !== 'name') {
          throw new ExpressionError(`expected a field name at column ${name.at + 1}`);
        }
        node = { kind: 'member', object: node, property: { kind: 'literal', value: name.text } };
      } else if (token.kind === 'op' && token.text === '[') {
        this.take();
        const property = this.expression(0);
        this.expect(']');
        node = { kind: 'member', object: node, property };
      } else {
        return node;
      }
    }
  }
}

const FUNCTIONS: Readonly<Record<string, (...args: Value[]) => Value>> = {
  len: (x) =>
    typeof x === 'string' || Array.isArray(x)
      ? x.length
      : x !== null && typeof x === 'object'
        ? Object.keys(x).length
        : 0,
  abs: (x) => Math.abs(number(x)),
  min: (...xs) => Math.min(...flatten(xs).map(number)),
  max: (...xs) => Math.max(...flatten(xs).map(number)),
  sum: (...xs) =>
    flatten(xs)
      .map(number)
      .reduce((a, b) => a + b, 0),
  exp: (x) => Math.exp(number(x)),
  lower: (x) => String(x).toLowerCase(),
};

function flatten(values: Value[]): Value[] {
  return values.length === 1 && Array.isArray(values[0]) ? values[0] : values;
}

function number(value: Value): number {
  if (typeof value === 'number') {
    return value;
  }
  if (typeof value === 'boolean') {
    return value ? 1 : 0;
  }
  if (value === null) {
    return NaN;
  }
  throw new ExpressionError(`${JSON.stringify(value).slice(0, 40)} is not a number`);
}

export function truthy(value: Value): boolean {
  if (Array.isArray(value)) {
    return value.length > 0;
  }
  return (
    value !== null && value !== 0 && value !== '' && value !== false && !(typeof value === 'number' && isNaN(value))
  );
}

function equal(a: Value, b: Value): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function lookup(scope: Readonly<Record<string, Value>>, name: string): Value {
  if (!Object.prototype.hasOwnProperty.call(scope, name)) {
    throw new ExpressionError(`'${name}' is not defined (known: ${Object.keys(scope).sort().join(', ')})`);
  }
  return scope[name];
}

function evaluateNode(node: Node, scope: Readonly<Record<string, Value>>): Value {
  switch (node.kind) {
    case 'literal':
      return node.value;
    case 'name':
      return lookup(scope, node.name);
    case 'unary': {
      const value = evaluateNode(node.operand, scope);
      return node.op === '!' ? !truthy(value) : -number(value);
    }
    case 'member': {
      const object = evaluateNode(node.object, scope);
      const key = evaluateNode(node.property, scope);
      if (Array.isArray(object) || typeof object === 'string') {
        if (typeof key !== 'number') {
          return key === 'length' ? object.length : null;
        }
        const index = key;
        const at = index < 0 ? object.length + index : index;
        return Array.isArray(object) ? (object[at] ?? null) : (object[at] ?? null);
      }
      if (object !== null && typeof object === 'object') {
        return Object.prototype.hasOwnProperty.call(object, String(key))
          ? (object as Record<string, Value>)[String(key)]
          : null;
      }
      return null;
    }
    case 'call': {
      const fn = own(FUNCTIONS, node.name) ? FUNCTIONS[node.name] : undefined;
      if (!fn) {
        throw new ExpressionError(`unknown function '${node.name}' (known: ${Object.keys(FUNCTIONS).join(', ')})`);
      }
      return fn(...node.args.map((arg) => evaluateNode(arg, scope)));
    }
    case 'binary': {
      if (node.op === '&&') {
        const left = evaluateNode(node.left, scope);
        return truthy(left) ? evaluateNode(node.right, scope) : left;
      }
      if (node.op === '||') {
        const left = evaluateNode(node.left, scope);
        return truthy(left) ? left : evaluateNode(node.right, scope);
      }
      const left = evaluateNode(node.left, scope);
      const right = evaluateNode(node.right, scope);
      switch (node.op) {
        case 'in':
          if (typeof right === 'string') {
            return right.toLowerCase().includes(String(left).toLowerCase());
          }
          if (Array.isArray(right)) {
            return right.some((item) => equal(item, left));
          }
          return (
            right !== null && typeof right === 'object' && Object.prototype.hasOwnProperty.call(right, String(left))
          );
        case '==':
          return equal(left, right);
        case '!=':
          return !equal(left, right);
        case '<':
          return number(left) < number(right);
        case '<=':
          return number(left) <= number(right);
        case '>':
          return number(left) > number(right);
        case '>=':
          return number(left) >= number(right);
        case '+':
          return typeof left === 'string' || typeof right === 'string'
            ? `${left}${right}`
            : number(left) + number(right);
        case '-':
          return number(left) - number(right);
        case '*':
          return number(left) * number(right);
        case '/':
          return number(left) / number(right);
        case '%':
          return number(left) % number(right);
      }
      throw new ExpressionError(`unknown operator '${node.op}'`);
    }
  }
}

/** A parsed expression, evaluated over any number of scopes (a breakpoint over every turn). */
export class Expression {
  private readonly node: Node;
  constructor(readonly source: string) {
    this.node = new Parser(tokenize(source)).parse();
  }

  evaluate(scope: Readonly<Record<string, Value>>): Value {
    return evaluateNode(this.node, scope);
  }
}

export function evaluate(source: string, scope: Readonly<Record<string, Value>>): Value {
  return new Expression(source).evaluate(scope);
}

/** How a value reads in the Variables view, the console and a logpoint. */
export function show(value: Value): string {
  if (typeof value === 'string') {
    return JSON.stringify(value);
  }
  if (typeof value === 'number') {
    return Number.isInteger(value) ? String(value) : fixed(value, 4).replace(/0+$/, '').replace(/\.$/, '');
  }
  return JSON.stringify(value);
}
