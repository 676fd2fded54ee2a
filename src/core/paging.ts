import { Type, type TSchema } from 'typebox';
import { ValidationError } from './errors.js';

const MAX_PAGE_SIZE = 2000;
/** More would sort by columns that rarely decide anything, and each order is a statement PostgreSQL plans. */
const MAX_SORT_TERMS = 8;

/** `page`, `size` and `sort` of every paged operation. */
export const PageQuery = {
  // int32, as `number` of the envelope: a larger page would overflow the row offset.
  page: Type.Integer({ minimum: 0, maximum: 2147483647, default: 0, description: 'page to retrieve, first page is 0' }),
  size: Type.Integer({
    minimum: 1,
    maximum: 2147483647,
    default: 30,
    description: `page size; above ${MAX_PAGE_SIZE} served as ${MAX_PAGE_SIZE}`,
  }),
  sort: Type.Optional(
    Type.Array(Type.String(), {
      description:
        `\`property\` or \`property,property(,ASC|DESC)\`; repeat for different directions; nested properties dotted; ` +
        `at most ${MAX_SORT_TERMS} properties, each once`,
    }),
  ),
};

export interface PageParameters {
  page: number;
  size: number;
  sort?: string[];
}

/** The sortable properties of a resource: the API property path and the SQL expression it sorts by. */
export type Sortable = Readonly<Record<string, string>>;

export interface SortOrder {
  property: string;
  direction: 'ASC' | 'DESC';
}

export interface PageRequest {
  page: number;
  size: number;
  offset: number;
  orders: SortOrder[];
  /** The SQL ORDER BY clause, ending with the tie-breaker so that paging is stable. */
  orderBy: string;
}

/**
 * Parses `sort` as Spring does: `a,b,desc` sorts a and b descending; each parameter has its own direction. At most
 * `MAX_SORT_TERMS` properties, each once (a second direction for one would be meaningless).
 */
function parseSort(sort: readonly string[] | undefined, sortable: Sortable, objectName: string): SortOrder[] {
  const orders: SortOrder[] = [];
  const violations: SortViolation[] = [];
  for (const parameter of sort ?? []) {
    const parts = parameter
      .split(',')
      .map((part) => part.trim())
      .filter((part) => part !== '');
    const last = parts.at(-1)?.toUpperCase();
    const direction = last === 'ASC' || last === 'DESC' ? last : 'ASC';
    const properties = last === direction ? parts.slice(0, -1) : parts;
    for (const property of properties) {
      if (!Object.hasOwn(sortable, property)) violations.push(unknownProperty(property, sortable));
      else if (orders.some((order) => order.property === property)) violations.push(duplicateProperty(property));
      else orders.push({ property, direction });
    }
  }
  if (orders.length > MAX_SORT_TERMS) violations.push(TOO_MANY_TERMS);
  if (violations.length > 0)
    throw ValidationError.of(
      objectName,
      violations.map((violation) => ({ field: 'sort', ...violation })),
    );
  return orders;
}

type SortViolation = { code: string; rejectedValue?: string; defaultMessage: string };

const unknownProperty = (property: string, sortable: Sortable): SortViolation => ({
  code: 'InvalidSortProperty',
  rejectedValue: property,
  defaultMessage: `unknown sort property '${property}'; sortable: ${Object.keys(sortable).join(', ')}`,
});

const duplicateProperty = (property: string): SortViolation => ({
  code: 'DuplicateSortProperty',
  rejectedValue: property,
  defaultMessage: `sort property '${property}' is given more than once`,
});

const TOO_MANY_TERMS: SortViolation = {
  code: 'MaxSortTerms',
  defaultMessage: `at most ${MAX_SORT_TERMS} sort properties`,
};

function orderByClause(orders: readonly SortOrder[], sortable: Sortable, tieBreaker: string): string {
  const terms = orders.map((order) => `${sortable[order.property]} ${order.direction}`);
  return `ORDER BY ${[...terms, tieBreaker].join(', ')}`;
}

export function pageRequest(
  query: PageParameters,
  sortable: Sortable,
  tieBreaker: string,
  objectName = 'queryParameters',
): PageRequest {
  const size = Math.min(query.size, MAX_PAGE_SIZE);
  const orders = parseSort(query.sort, sortable, objectName);
  return {
    page: query.page,
    size,
    offset: query.page * size,
    orders,
    orderBy: orderByClause(orders, sortable, tieBreaker),
  };
}

/**
 * The page `request` asked for, cut to its first `fitting` rows when only those fit an answer's byte budget: served
 * at the largest size that divides the size asked and is no more than them, so it starts where the asked page did
 * and its envelope (`size`, `number`) names the pages that follow it exactly.
 */
export function narrowedPage(request: PageRequest, fitting: number): PageRequest {
  if (fitting >= request.size) return request;
  let size = Math.max(fitting, 1);
  while (request.size % size !== 0) size -= 1;
  return { ...request, size, page: request.offset / size };
}

function sortState(orders: readonly SortOrder[]) {
  const sorted = orders.length > 0;
  return { sorted, unsorted: !sorted, empty: !sorted };
}

export interface Page<T> {
  content: T[];
  totalPages: number;
  totalElements: number;
  first: boolean;
  last: boolean;
  numberOfElements: number;
  size: number;
  number: number;
  empty: boolean;
  sort: ReturnType<typeof sortState>;
  pageable: {
    pageNumber: number;
    pageSize: number;
    offset: number;
    paged: boolean;
    unpaged: boolean;
    sort: ReturnType<typeof sortState>;
  };
}

export function pageOf<T>(content: T[], totalElements: number, request: PageRequest): Page<T> {
  const totalPages = Math.ceil(totalElements / request.size);
  const sort = sortState(request.orders);
  return {
    content,
    totalPages,
    totalElements,
    first: request.page === 0,
    last: request.page >= totalPages - 1,
    numberOfElements: content.length,
    size: request.size,
    number: request.page,
    empty: content.length === 0,
    sort,
    pageable: {
      pageNumber: request.page,
      pageSize: request.size,
      offset: request.offset,
      paged: true,
      unpaged: false,
      sort,
    },
  };
}

const SortSchema = Type.Object(
  { sorted: Type.Boolean(), unsorted: Type.Boolean(), empty: Type.Boolean() },
  { title: 'Sort' },
);

/** The page envelope around items of `item`. */
export function PageSchema<T extends TSchema>(item: T, title: string) {
  return Type.Object(
    {
      content: Type.Array(item),
      totalPages: Type.Integer(),
      totalElements: Type.Integer(),
      first: Type.Boolean(),
      last: Type.Boolean(),
      numberOfElements: Type.Integer(),
      size: Type.Integer(),
      number: Type.Integer(),
      empty: Type.Boolean(),
      sort: SortSchema,
      pageable: Type.Object({
        pageNumber: Type.Integer(),
        pageSize: Type.Integer(),
        offset: Type.Integer(),
        paged: Type.Boolean(),
        unpaged: Type.Boolean(),
        sort: SortSchema,
      }),
    },
    { title },
  );
}
