//! `source.filter`: which rows of the Paimon table the sync keeps in MySQL, as the Flink job's
//! `WHERE` did. A small predicate language over the table's columns: comparisons (`=`, `<>`,
//! `!=`, `<`, `<=`, `>`, `>=`) of a column with a literal, `[NOT] IN (…)`, `IS [NOT] NULL`,
//! `AND`, `OR`, `NOT` and parentheses, with SQL's three-valued logic: a row is kept only where
//! the predicate is TRUE (a comparison with a NULL value is unknown, so the row is not kept).
//!
//! Exact under updates because the worker applies row images, never deltas (`mapping::decode`):
//! an insert or update whose new row fails the filter is applied as a delete of its key (the
//! row may have passed before), one that passes as an upsert; a delete is applied as it is (a
//! key MySQL doesn't hold deletes nothing). A full read leaves out the rows that fail, and its
//! sweep removes those MySQL still holds. A filter over partition columns only also prunes
//! the full read's partitions ([`RowFilter::partition_predicate`]): whole partitions whose rows
//! would all be left out.
//!
//! Literals take the column's type, checked when the sync starts: numbers for numeric columns
//! (no more decimals than a DECIMAL column has), `'text'` for strings, dates, times and
//! timestamps (`'2024-01-31'`, `'2024-01-31 12:00:00'`), `TRUE`/`FALSE` for booleans.

use std::sync::Arc;

use arrow_arith::boolean::{and_kleene, is_null, not, or_kleene};
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, Scalar, StringArray};
use arrow_cast::{cast_with_options, CastOptions};
use arrow_schema::DataType as ArrowType;
use paimon::spec::{DataField, Datum, Predicate, PredicateBuilder};

/// A parsed `source.filter`, its literals typed by the columns they are compared with.
#[derive(Debug)]
pub struct RowFilter {
    text: String,
    expr: Expr,
    /// The same filter as a Paimon predicate, when it names partition columns only and each
    /// leaf has a Paimon form (see [`Self::partition_predicate`]).
    partition_predicate: Option<Predicate>,
}

#[derive(Debug)]
enum Expr {
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Compare {
        column: String,
        op: Op,
        value: Value,
    },
    In {
        column: String,
        values: Vec<Value>,
    },
    IsNull {
        column: String,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// A literal, and (once resolved) the same as a one-element array of its column's type.
#[derive(Debug)]
struct Value {
    literal: Literal,
    typed: Option<ArrayRef>,
}

#[derive(Clone, Debug, PartialEq)]
enum Literal {
    Text(String),
    Number(String),
    Bool(bool),
}

/// Two filters are one when written alike (what a checkpoint compares, too).
impl PartialEq for RowFilter {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl RowFilter {
    /// Parses `text` and types its literals by `fields` (the table's columns); `partition_keys`
    /// decide whether it can prune partitions. The error says what is wrong and where.
    pub fn new(
        text: &str,
        fields: &[DataField],
        partition_keys: &[String],
    ) -> Result<Self, String> {
        let tokens = lex(text)?;
        let mut parser = Parser { tokens, at: 0 };
        let mut expr = parser.or()?;
        if let Some(t) = parser.tokens.get(parser.at) {
            return Err(format!(
                "source.filter: unexpected {} after a complete predicate",
                t.shown()
            ));
        }
        let mut columns = Vec::new();
        resolve(&mut expr, fields, &mut columns)?;
        let partition_predicate = columns
            .iter()
            .all(|c| partition_keys.contains(c))
            .then(|| predicate(&expr, &PredicateBuilder::new(fields)))
            .flatten();
        Ok(Self {
            text: text.trim().to_string(),
            expr,
            partition_predicate,
        })
    }

    /// The filter as written (trimmed): what a checkpoint records.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Which rows of `batch` are kept: TRUE only (FALSE and unknown are not).
    pub fn keeps(&self, batch: &RecordBatch) -> Result<BooleanArray, String> {
        let verdict = eval(&self.expr, batch)?;
        Ok(verdict
            .iter()
            .map(|v| Some(v == Some(true)))
            .collect::<BooleanArray>())
    }

    /// The same filter as a Paimon predicate for partition pruning, when it names partition
    /// columns only and each leaf has a Paimon form; else `None` (nothing is pruned, every
    /// row is still filtered).
    pub fn partition_predicate(&self) -> Option<Predicate> {
        self.partition_predicate.clone()
    }
}

// ----------------------------------------------------------------------------- evaluation

fn column<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a ArrayRef, String> {
    batch
        .column_by_name(name)
        .ok_or_else(|| format!("source.filter: column {name:?} is not in the rows read"))
}

/// `value` as an array of `column`'s type (a schema change may have changed it).
fn typed_like(value: &Value, column: &ArrayRef) -> Result<ArrayRef, String> {
    let typed = value
        .typed
        .as_ref()
        .ok_or("source.filter: literal not resolved")?;
    if typed.data_type() == column.data_type() {
        return Ok(typed.clone());
    }
    cast_literal(&value.literal, column.data_type())
}

fn eval(expr: &Expr, batch: &RecordBatch) -> Result<BooleanArray, String> {
    let failed = |e: arrow_schema::ArrowError| format!("source.filter: {e}");
    Ok(match expr {
        Expr::And(a, b) => and_kleene(&eval(a, batch)?, &eval(b, batch)?).map_err(failed)?,
        Expr::Or(a, b) => or_kleene(&eval(a, batch)?, &eval(b, batch)?).map_err(failed)?,
        Expr::Not(a) => not(&eval(a, batch)?).map_err(failed)?,
        Expr::IsNull { column: c } => is_null(column(batch, c)?).map_err(failed)?,
        Expr::Compare {
            column: c,
            op,
            value,
        } => {
            let col = column(batch, c)?;
            compare(col, *op, &typed_like(value, col)?).map_err(failed)?
        }
        Expr::In { column: c, values } => {
            let col = column(batch, c)?;
            let mut any: Option<BooleanArray> = None;
            for v in values {
                let eq = compare(col, Op::Eq, &typed_like(v, col)?).map_err(failed)?;
                any = Some(match any {
                    Some(a) => or_kleene(&a, &eq).map_err(failed)?,
                    None => eq,
                });
            }
            any.unwrap_or_else(|| BooleanArray::from(vec![false; batch.num_rows()]))
        }
    })
}

fn compare(
    col: &ArrayRef,
    op: Op,
    literal: &ArrayRef,
) -> Result<BooleanArray, arrow_schema::ArrowError> {
    use arrow_ord::cmp;
    let literal = Scalar::new(literal.clone());
    match op {
        Op::Eq => cmp::eq(col, &literal),
        Op::Ne => cmp::neq(col, &literal),
        Op::Lt => cmp::lt(col, &literal),
        Op::Le => cmp::lt_eq(col, &literal),
        Op::Gt => cmp::gt(col, &literal),
        Op::Ge => cmp::gt_eq(col, &literal),
    }
}

// ----------------------------------------------------------------------------- typing

fn resolve(expr: &mut Expr, fields: &[DataField], columns: &mut Vec<String>) -> Result<(), String> {
    let mut field = |name: &str| -> Result<ArrowType, String> {
        let f = fields.iter().find(|f| f.name() == name).ok_or_else(|| {
            let names: Vec<&str> = fields.iter().map(|f| f.name()).collect();
            format!(
                "source.filter: the Paimon table has no column {name:?} (its columns: {})",
                names.join(", ")
            )
        })?;
        columns.push(name.to_string());
        paimon::arrow::paimon_type_to_arrow(f.data_type())
            .map_err(|e| format!("source.filter: column {name:?}: {e}"))
    };
    match expr {
        Expr::And(a, b) | Expr::Or(a, b) => {
            resolve(a, fields, columns)?;
            resolve(b, fields, columns)
        }
        Expr::Not(a) => resolve(a, fields, columns),
        Expr::IsNull { column } => field(column).map(drop),
        Expr::Compare { column, value, .. } => {
            let ty = field(column)?;
            type_value(value, column, &ty)
        }
        Expr::In { column, values } => {
            let ty = field(column)?;
            values
                .iter_mut()
                .try_for_each(|v| type_value(v, column, &ty))
        }
    }
}

fn type_value(value: &mut Value, column: &str, ty: &ArrowType) -> Result<(), String> {
    use ArrowType::*;
    let fits = match (&value.literal, ty) {
        (Literal::Number(n), Decimal128(_, scale) | Decimal256(_, scale)) => {
            let decimals = n
                .split_once('.')
                .map_or(0, |(_, d)| d.trim_end_matches('0').len());
            if decimals > (*scale).max(0) as usize {
                return Err(format!(
                    "source.filter: {n} has more decimals than column {column:?} ({ty}) holds"
                ));
            }
            true
        }
        (Literal::Number(_), Int8 | Int16 | Int32 | Int64 | Float32 | Float64) => true,
        (Literal::Bool(_), Boolean) => true,
        (
            Literal::Text(_),
            Utf8 | LargeUtf8 | Utf8View | Date32 | Time32(_) | Time64(_) | Timestamp(..),
        ) => true,
        _ => false,
    };
    if !fits {
        let wanted = match ty {
            Boolean => "TRUE or FALSE",
            Utf8 | LargeUtf8 | Utf8View => "a quoted 'text'",
            Date32 | Time32(_) | Time64(_) | Timestamp(..) => "a quoted value such as '2024-01-31' or '2024-01-31 12:00:00'",
            Int8 | Int16 | Int32 | Int64 | Float32 | Float64 | Decimal128(..) | Decimal256(..) => "a number",
            _ => return Err(format!("source.filter: column {column:?} ({ty}) can't be compared; filter on a scalar column")),
        };
        return Err(format!(
            "source.filter: column {column:?} ({ty}) is compared with {}; use {wanted}",
            value.literal.shown()
        ));
    }
    value.typed =
        Some(cast_literal(&value.literal, ty).map_err(|e| format!("{e} (column {column:?})"))?);
    Ok(())
}

fn cast_literal(literal: &Literal, ty: &ArrowType) -> Result<ArrayRef, String> {
    let text = match literal {
        Literal::Text(t) | Literal::Number(t) => t.clone(),
        Literal::Bool(b) => b.to_string(),
    };
    let array: ArrayRef = Arc::new(StringArray::from(vec![text.as_str()]));
    let strict = CastOptions {
        safe: false,
        ..Default::default()
    };
    cast_with_options(&array, ty, &strict).map_err(|e| {
        format!(
            "source.filter: {} is not a value of type {ty}: {e}",
            literal.shown()
        )
    })
}

// ----------------------------------------------------------------------------- pruning

fn predicate(expr: &Expr, b: &PredicateBuilder) -> Option<Predicate> {
    Some(match expr {
        Expr::And(l, r) => Predicate::and(vec![predicate(l, b)?, predicate(r, b)?]),
        Expr::Or(l, r) => Predicate::or(vec![predicate(l, b)?, predicate(r, b)?]),
        Expr::Not(a) => match a.as_ref() {
            // Only where Paimon's negation is SQL's: NOT (x IN …) over non-null literals;
            // other negations are left to the row filter.
            Expr::In { column, values } => b.is_not_in(column, datums(values)?).ok()?,
            _ => return None,
        },
        // A NULL partition value is stored as the default partition's name: whether Paimon's
        // pruning takes it for NULL was not checked against its read, so `IS [NOT] NULL` is
        // left to the row filter (pruning less never changes what is kept).
        Expr::IsNull { .. } => return None,
        Expr::In { column, values } => b.is_in(column, datums(values)?).ok()?,
        Expr::Compare { column, op, value } => {
            let d = datum(value)?;
            match op {
                Op::Eq => b.equal(column, d),
                Op::Ne => b.not_equal(column, d),
                Op::Lt => b.less_than(column, d),
                Op::Le => b.less_or_equal(column, d),
                Op::Gt => b.greater_than(column, d),
                Op::Ge => b.greater_or_equal(column, d),
            }
            .ok()?
        }
    })
}

fn datums(values: &[Value]) -> Option<Vec<Datum>> {
    values.iter().map(datum).collect()
}

/// The literal as a Paimon datum, for the types partitions usually have.
fn datum(value: &Value) -> Option<Datum> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    let a = value.typed.as_ref()?;
    Some(match a.data_type() {
        ArrowType::Utf8 => Datum::String(a.as_string::<i32>().value(0).to_string()),
        ArrowType::Int8 => Datum::TinyInt(a.as_primitive::<Int8Type>().value(0)),
        ArrowType::Int16 => Datum::SmallInt(a.as_primitive::<Int16Type>().value(0)),
        ArrowType::Int32 => Datum::Int(a.as_primitive::<Int32Type>().value(0)),
        ArrowType::Int64 => Datum::Long(a.as_primitive::<Int64Type>().value(0)),
        ArrowType::Date32 => Datum::Date(a.as_primitive::<Date32Type>().value(0)),
        ArrowType::Boolean => Datum::Bool(a.as_boolean().value(0)),
        _ => return None,
    })
}

// ----------------------------------------------------------------------------- parsing

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Word(String),
    Quoted(String),
    Column(String),
    Number(String),
    Symbol(&'static str),
}

impl Token {
    fn shown(&self) -> String {
        match self {
            Token::Word(w) => w.clone(),
            Token::Quoted(t) => format!("'{t}'"),
            Token::Column(c) => format!("`{c}`"),
            Token::Number(n) => n.clone(),
            Token::Symbol(s) => format!("{s:?}"),
        }
    }

    fn is_word(&self, word: &str) -> bool {
        matches!(self, Token::Word(w) if w.eq_ignore_ascii_case(word))
    }
}

impl Literal {
    fn shown(&self) -> String {
        match self {
            Literal::Text(t) => format!("'{t}'"),
            Literal::Number(n) => n.clone(),
            Literal::Bool(b) => b.to_string().to_uppercase(),
        }
    }
}

fn lex(text: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '\'' || c == '`' {
            // 'it''s' and `a``b`: the quote doubled inside.
            let mut s = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err(format!("source.filter: unclosed {c} at character {}", i)),
                    Some(&q) if q == c && chars.get(i + 1) == Some(&c) => {
                        s.push(c);
                        i += 2;
                    }
                    Some(&q) if q == c => {
                        i += 1;
                        break;
                    }
                    Some(&other) => {
                        s.push(other);
                        i += 1;
                    }
                }
            }
            out.push(if c == '\'' {
                Token::Quoted(s)
            } else {
                Token::Column(s)
            });
        } else if c.is_ascii_digit()
            || ((c == '-' || c == '+' || c == '.')
                && chars
                    .get(i + 1)
                    .is_some_and(|n| n.is_ascii_digit() || *n == '.'))
        {
            let start = i;
            i += 1;
            while chars
                .get(i)
                .is_some_and(|n| n.is_ascii_digit() || *n == '.')
            {
                i += 1;
            }
            let n: String = chars[start..i].iter().collect();
            if n.trim_start_matches(['-', '+']).parse::<f64>().is_err()
                || n.matches('.').count() > 1
            {
                return Err(format!("source.filter: {n:?} is not a number"));
            }
            out.push(Token::Number(n));
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while chars
                .get(i)
                .is_some_and(|n| n.is_alphanumeric() || *n == '_')
            {
                i += 1;
            }
            out.push(Token::Word(chars[start..i].iter().collect()));
        } else {
            let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
            let symbol = match (two.as_str(), c) {
                ("<=", _) => "<=",
                (">=", _) => ">=",
                ("<>", _) => "<>",
                ("!=", _) => "!=",
                (_, '=') => "=",
                (_, '<') => "<",
                (_, '>') => ">",
                (_, '(') => "(",
                (_, ')') => ")",
                (_, ',') => ",",
                _ => return Err(format!("source.filter: unexpected {c:?} at character {i}")),
            };
            i += symbol.len();
            out.push(Token::Symbol(symbol));
        }
    }
    Ok(out)
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

const RESERVED: &[&str] = &["AND", "OR", "NOT", "IN", "IS", "NULL", "TRUE", "FALSE"];

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self, wanted: &str) -> Result<Token, String> {
        let t = self
            .tokens
            .get(self.at)
            .cloned()
            .ok_or_else(|| format!("source.filter: ends where {wanted} was expected"))?;
        self.at += 1;
        Ok(t)
    }

    fn eat_word(&mut self, word: &str) -> bool {
        let hit = self.peek().is_some_and(|t| t.is_word(word));
        self.at += hit as usize;
        hit
    }

    fn expect(&mut self, symbol: &str) -> Result<(), String> {
        match self.next(symbol)? {
            Token::Symbol(s) if s == symbol => Ok(()),
            t => Err(format!(
                "source.filter: expected {symbol:?}, found {}",
                t.shown()
            )),
        }
    }

    fn or(&mut self) -> Result<Expr, String> {
        let mut left = self.and()?;
        while self.eat_word("OR") {
            left = Expr::Or(Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, String> {
        let mut left = self.negation()?;
        while self.eat_word("AND") {
            left = Expr::And(Box::new(left), Box::new(self.negation()?));
        }
        Ok(left)
    }

    fn negation(&mut self) -> Result<Expr, String> {
        if self.eat_word("NOT") {
            return Ok(Expr::Not(Box::new(self.negation()?)));
        }
        if self.peek() == Some(&Token::Symbol("(")) {
            self.at += 1;
            let inner = self.or()?;
            self.expect(")")?;
            return Ok(inner);
        }
        self.predicate()
    }

    fn predicate(&mut self) -> Result<Expr, String> {
        let column = match self.next("a column")? {
            Token::Column(c) => c,
            Token::Word(w) if !RESERVED.iter().any(|r| w.eq_ignore_ascii_case(r)) => w,
            t => {
                return Err(format!(
                    "source.filter: expected a column, found {}",
                    t.shown()
                ))
            }
        };
        if self.eat_word("IS") {
            let negated = self.eat_word("NOT");
            if !self.eat_word("NULL") {
                return Err(format!("source.filter: expected NULL after `{column} IS`"));
            }
            let test = Expr::IsNull { column };
            return Ok(if negated {
                Expr::Not(Box::new(test))
            } else {
                test
            });
        }
        let negated = self.eat_word("NOT");
        if self.eat_word("IN") {
            self.expect("(")?;
            let mut values = vec![self.literal(&column)?];
            while self.peek() == Some(&Token::Symbol(",")) {
                self.at += 1;
                values.push(self.literal(&column)?);
            }
            self.expect(")")?;
            let test = Expr::In { column, values };
            return Ok(if negated {
                Expr::Not(Box::new(test))
            } else {
                test
            });
        }
        if negated {
            return Err(format!("source.filter: expected IN after `{column} NOT`"));
        }
        let op = match self.next("a comparison")? {
            Token::Symbol("=") => Op::Eq,
            Token::Symbol("<>" | "!=") => Op::Ne,
            Token::Symbol("<") => Op::Lt,
            Token::Symbol("<=") => Op::Le,
            Token::Symbol(">") => Op::Gt,
            Token::Symbol(">=") => Op::Ge,
            t => {
                return Err(format!(
                "source.filter: expected a comparison, IN or IS after column {column:?}, found {}",
                t.shown()
            ))
            }
        };
        let value = self.literal(&column)?;
        Ok(Expr::Compare { column, op, value })
    }

    fn literal(&mut self, column: &str) -> Result<Value, String> {
        let literal = match self.next("a value")? {
            Token::Quoted(t) => Literal::Text(t),
            Token::Number(n) => Literal::Number(n),
            t if t.is_word("TRUE") => Literal::Bool(true),
            t if t.is_word("FALSE") => Literal::Bool(false),
            t if t.is_word("NULL") => {
                return Err(format!(
                    "source.filter: a comparison with NULL is never true; write `{column} IS NULL` or `IS NOT NULL`"
                ))
            }
            t => return Err(format!("source.filter: expected a value for {column:?}, found {}", t.shown())),
        };
        Ok(Value {
            literal,
            typed: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Decimal128Array, Int64Array};
    use arrow_schema::{Field, Schema};
    use paimon::spec::DataType;

    fn fields() -> Vec<DataField> {
        let ty = |t: &str| -> DataType { serde_json::from_value(serde_json::json!(t)).unwrap() };
        vec![
            DataField::new(0, "id".into(), ty("BIGINT NOT NULL")),
            DataField::new(1, "amount".into(), ty("DECIMAL(10, 2)")),
            DataField::new(2, "status".into(), ty("STRING")),
            DataField::new(3, "region".into(), ty("STRING")),
        ]
    }

    fn batch() -> RecordBatch {
        let schema = Schema::new(vec![
            Field::new("id", ArrowType::Int64, false),
            Field::new("amount", ArrowType::Decimal128(10, 2), true),
            Field::new("status", ArrowType::Utf8, true),
            Field::new("region", ArrowType::Utf8, true),
        ]);
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(Int64Array::from(vec![1, 2, 3, 4])),
                Arc::new(
                    Decimal128Array::from(vec![Some(150), Some(999), None, Some(10_000)])
                        .with_precision_and_scale(10, 2)
                        .unwrap(),
                ),
                Arc::new(StringArray::from(vec![
                    Some("PAID"),
                    Some("NEW"),
                    Some("PAID"),
                    None,
                ])),
                Arc::new(StringArray::from(vec![
                    Some("EU"),
                    Some("EU"),
                    Some("US"),
                    Some("EU"),
                ])),
            ],
        )
        .unwrap()
    }

    fn kept(filter: &str) -> Vec<i64> {
        let f = RowFilter::new(filter, &fields(), &["region".into()]).unwrap();
        let keep = f.keeps(&batch()).unwrap();
        (0..4)
            .filter(|&i| keep.value(i))
            .map(|i| i as i64 + 1)
            .collect()
    }

    #[test]
    fn rows_are_kept_where_the_predicate_is_true() {
        assert_eq!(kept("status = 'PAID'"), [1, 3]);
        assert_eq!(kept("status IN ('PAID', 'NEW') AND region = 'EU'"), [1, 2]);
        assert_eq!(kept("amount >= 9.99 OR region <> 'EU'"), [2, 3, 4]);
        assert_eq!(kept("NOT (region = 'US') AND `status` IS NOT NULL"), [1, 2]);
        assert_eq!(kept("status IS NULL"), [4]);
        assert_eq!(kept("id != 2 and id < 4"), [1, 3]);
    }

    #[test]
    fn null_is_unknown_and_never_kept() {
        // Row 4's status is NULL: neither `= 'PAID'` nor its negation keeps it.
        assert_eq!(kept("NOT (status = 'PAID')"), [2]);
        assert_eq!(kept("status NOT IN ('NEW')"), [1, 3]);
        // Row 3's amount is NULL.
        assert_eq!(kept("amount > 0 OR amount <= 0"), [1, 2, 4]);
    }

    #[test]
    fn mistakes_are_named() {
        let err = |f: &str| RowFilter::new(f, &fields(), &[]).unwrap_err();
        assert!(err("colour = 'red'").contains("no column \"colour\""));
        assert!(err("status = 5").contains("use a quoted 'text'"));
        assert!(err("amount = '5'").contains("use a number"));
        assert!(err("amount = 1.234").contains("more decimals"));
        assert!(err("status = NULL").contains("IS NULL"));
        assert!(err("status = 'a' AND").contains("ends where a column was expected"));
        assert!(err("status = 'a' status").contains("unexpected status"));
        assert!(err("(status = 'a'").contains("ends where ) was expected"));
        assert!(err("status = 'it").contains("unclosed"));
        assert!(err("id = 12x").contains("unexpected x"));
    }

    #[test]
    fn only_a_partition_filter_prunes() {
        let pruned = |f: &str| {
            RowFilter::new(f, &fields(), &["region".into()])
                .unwrap()
                .partition_predicate()
                .is_some()
        };
        assert!(pruned("region = 'EU'"));
        assert!(pruned("region IN ('EU', 'US') OR region > 'X'"));
        assert!(
            !pruned("region IN ('EU', 'US') OR region IS NULL"),
            "left to the row filter"
        );
        assert!(!pruned("region = 'EU' AND status = 'PAID'"));
        assert!(!pruned("NOT (region = 'EU')"), "left to the row filter");
    }
}
