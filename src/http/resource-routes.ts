import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import type { Static, TSchema } from 'typebox';
import { appendChange, type Actor } from '../db/change-log.js';
import type { CatalogueTable } from '../db/catalogue-table.js';
import { actorOf } from './actor.js';
import type { Database, Queryable } from '../db/database.js';
import { resourceReads } from '../db/sql.js';
import type { Access } from './auth.js';
import { catalogueReads, type Serialize } from './catalogue-reads.js';
import { pageOf, pageRequest, type PageRequest } from '../core/paging.js';
import { UuidParams } from '../core/schemas.js';
import { sendJsonArray } from './streaming.js';

export type Operation = 'find' | 'get' | 'add' | 'update' | 'delete';

/** A route's schema serializer makes strings (Fastify's type also allows the buffers of a custom serializer, unused here). */
const serializerOf =
  (reply: FastifyReply): Serialize =>
  (body) =>
    reply.serialize(body) as string;

/**
 * A resource of the catalogue managed by the authority: paged find and get for `read`, add, update and delete for
 * `write`, all by UUID, with the project's conventions (media types, page envelope, 404 before the body is checked).
 */
export interface ManagedResource<Form extends TSchema, Item extends TSchema, Write, Query extends TSchema = TSchema> {
  /** The media type names of an operation, such as `['capabilities.find']`. */
  mediaTypes: (operation: Operation) => string[];
  /**
   * Its table: its kind in the change log, how its pages sort, its find and get (the 404 of an unknown id), and
   * the reads the catalogue cache answers from memory (never in a write).
   */
  table: CatalogueTable;
  /** The name of the form in 400 bodies, such as `capabilityFormDTO`. */
  objectName: string;
  schemas: { form: Form; item: Item; page: TSchema; query: Query };
  access: { read: readonly Access[]; write: readonly Access[] };
  /**
   * A query that filters: the find of the matches, and whether a query filters nothing (the catalogue cache answers
   * those). Without it, every find is a page of all the rows.
   */
  filters?: {
    find(db: Queryable, page: PageRequest, query: Static<Query>): Promise<{ total: number; rows: Static<Item>[] }>;
    none(query: Static<Query>): boolean;
  };
  /** The array variant of find: every match, streamed, when the client asks for this media type name. */
  stream?: {
    mediaType: string;
    rows(db: Database, query: Static<Query>, orderBy: string): AsyncIterable<Static<Item>[]>;
  };
  /** What a valid form writes, its references resolved (400 listing every unknown one); `id` is set on update. */
  record(tx: Queryable, form: Static<Form>, id: string | null): Promise<Write>;
  insert(tx: Queryable, record: Write): Promise<string>;
  update(tx: Queryable, id: string, record: Write): Promise<void>;
  /** The form's properties whose JSON `null` is a value (clears what is set) rather than absent. */
  keepsNull?: readonly string[];
  /** Deletes the resource; 404 when there is none, 409 while something still uses it. */
  remove(tx: Queryable, id: string): Promise<void>;
}

/**
 * Runs an add's or update's write in its transaction, for what else the form's change tells: given by app.ts (the
 * removal notices of a process's or document type's date, which a resource below the code lists cannot name).
 */
export type AroundWrite = <T>(tx: Queryable, actor: Actor, form: object, write: () => Promise<T>) => Promise<T>;

const justWrite: AroundWrite = (_tx, _actor, _form, write) => write();

/** The five operations of a managed resource, each in one transaction when it writes. */
export function managedResourceRoutes<
  Form extends TSchema,
  Item extends TSchema,
  Write,
  Query extends TSchema = TSchema,
>(resource: ManagedResource<Form, Item, Write, Query>): FastifyPluginAsyncTypebox<{ aroundWrite?: AroundWrite }> {
  const { access, objectName, table } = resource;
  const { findAll, getById: get } = resourceReads<Static<Item>>(table);
  const find = resource.filters?.find ?? ((db, page) => findAll(db, page));
  const cached = catalogueReads(table.kind, resource.filters?.none);
  // Widened to TSchema: the route types need not follow the generic parameters; the schemas still validate.
  const schemas: Record<keyof typeof resource.schemas, TSchema> = resource.schemas;
  return async (app, { aroundWrite: around = justWrite }) => {
    app.get(
      '/',
      {
        schema: { querystring: schemas.query, response: { 200: schemas.page } },
        config: {
          access: access.read,
          mediaTypes: resource.mediaTypes('find'),
          streamMediaType: resource.stream?.mediaType,
          reads: 'standby',
        },
      },
      async (request, reply) => {
        const query = request.query as Static<Query> & Parameters<typeof pageRequest>[0];
        const page = pageRequest(query, table.sortable, table.id);
        if (resource.stream && request.wantsStream) {
          return sendJsonArray(reply, schemas.item, resource.stream.rows(app.db, query, page.orderBy));
        }
        const kept = await cached.find(app, page, query, serializerOf(reply));
        if (kept !== undefined) return kept;
        const { total, rows } = await find(app.db, page, query);
        return pageOf(rows, total, page);
      },
    );

    app.get(
      '/:identifier',
      {
        schema: { params: UuidParams, response: { 200: schemas.item } },
        config: { access: access.read, mediaTypes: resource.mediaTypes('get'), reads: 'standby' },
      },
      async (request, reply) => {
        const { identifier } = request.params;
        return (await cached.get(app, identifier, serializerOf(reply))) ?? get(app.db, identifier);
      },
    );

    app.post(
      '/',
      {
        schema: { body: schemas.form, response: { 201: schemas.item } },
        config: {
          access: access.write,
          mediaTypes: resource.mediaTypes('add'),
          objectName,
          keepsNull: resource.keepsNull,
        },
      },
      async (request, reply) => {
        const form = request.body as Static<Form>;
        const created = await app.db.transaction((tx) =>
          around(tx, actorOf(request), form as object, async () => {
            const id = await resource.insert(tx, await resource.record(tx, form, null));
            const after = await get(tx, id);
            await appendChange(tx, actorOf(request), {
              resource: table.kind,
              identifier: id,
              operation: 'create',
              before: null,
              after,
            });
            return after;
          }),
        );
        return reply.status(201).send(created);
      },
    );

    app.put(
      '/:identifier',
      {
        schema: { params: UuidParams, body: schemas.form, response: { 200: schemas.item } },
        config: {
          access: access.write,
          mediaTypes: resource.mediaTypes('update'),
          objectName,
          keepsNull: resource.keepsNull,
        },
      },
      async (request) => {
        const { identifier } = request.params;
        const form = request.body as Static<Form>;
        return app.db.transaction((tx) =>
          around(tx, actorOf(request), form as object, async () => {
            const before = await get(tx, identifier);
            await resource.update(tx, identifier, await resource.record(tx, form, identifier));
            const after = await get(tx, identifier);
            await appendChange(tx, actorOf(request), {
              resource: table.kind,
              identifier,
              operation: 'update',
              before,
              after,
            });
            return after;
          }),
        );
      },
    );

    app.delete(
      '/:identifier',
      {
        schema: { params: UuidParams },
        config: { access: access.write, mediaTypes: resource.mediaTypes('delete') },
      },
      async (request, reply) => {
        const { identifier } = request.params;
        await app.db.transaction(async (tx) => {
          const before = await get(tx, identifier);
          await resource.remove(tx, identifier);
          await appendChange(tx, actorOf(request), {
            resource: table.kind,
            identifier,
            operation: 'delete',
            before,
            after: null,
          });
        });
        return reply.status(204).send();
      },
    );
  };
}

/** The media types of a resource named `name`: `name.find`, `name.get`, ... */
export const mediaTypesNamed = (name: string) => (operation: Operation) => [`${name}.${operation}`];
