import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { I18n, setActiveLanguage, translator, type Language, type TextKey } from './i18n.js';
import {
  AccessPoints,
  AccessPointProviders,
  CatalogueAdmin,
  ServiceProviders,
  TransportProfiles,
  Users,
} from './pages/managed/kinds.js';
import { Catalogue } from './pages/catalogue.js';
import { Audit, Deliveries } from './pages/changes.js';
import { ImportParticipants } from './pages/import.js';
import { Lookup } from './pages/lookup.js';
import { ParticipantForm } from './pages/participant-form.js';
import { ChangePassword } from './pages/account.js';
import { Participants } from './pages/participants.js';
import { SignIn } from './pages/sign-in.js';
import { StatusPage } from './pages/status.js';
import { href, navigate, useRoute } from './router.js';
import { roleName } from './words.js';
import {
  isAuthority,
  isProvider,
  onSessionEnded,
  restoreSession,
  sessionIsLive,
  signOut,
  type Session,
} from './session.js';

interface Page {
  path: string;
  label: TextKey;
  allowed: (session: Session | null) => boolean;
  /** Reached from the account area of the header, not the menu. */
  inAccount?: boolean;
}

const PUBLIC = () => true;
const PAGES: Page[] = [
  { path: 'lookup', label: 'lookup', allowed: PUBLIC },
  // The authority's own catalogue page shows the same and more.
  { path: 'catalogue', label: 'catalogue', allowed: (session) => !isAuthority(session) },
  { path: 'participants', label: 'participants', allowed: (session) => isProvider(session) || isAuthority(session) },
  { path: 'import', label: 'importFile', allowed: isProvider },
  { path: 'status', label: 'statusPage', allowed: isAuthority },
  { path: 'service-providers', label: 'serviceProviders', allowed: isAuthority },
  { path: 'access-point-providers', label: 'accessPointProviders', allowed: isAuthority },
  { path: 'access-points', label: 'accessPoints', allowed: isAuthority },
  { path: 'transport-profiles', label: 'transportProfiles', allowed: isAuthority },
  { path: 'users', label: 'users', allowed: (session) => session?.role === 'ADMIN' },
  { path: 'catalogue-admin', label: 'catalogueAdmin', allowed: isAuthority },
  { path: 'audit', label: 'audit', allowed: (session) => isAuthority(session) || isProvider(session) },
  { path: 'deliveries', label: 'deliveries', allowed: isAuthority },
  { path: 'password', label: 'changePassword', allowed: (session) => session !== null, inAccount: true },
];

/** The language chosen in the header, kept for the next visit (a preference, nothing secret). */
const LANGUAGE = 'registry.language';

function storedLanguage(): string | null {
  try {
    return localStorage.getItem(LANGUAGE);
  } catch {
    return null;
  }
}

function initialLanguage(): Language {
  const chosen = storedLanguage();
  if (chosen === 'en' || chosen === 'nb') return chosen;
  return navigator.language.toLowerCase().startsWith('en') ? 'en' : 'nb';
}

export function App() {
  const [language, setLanguage] = useState<Language>(initialLanguage);
  const [session, setSession] = useState<Session | null>(restoreSession);
  const [menuOpen, setMenuOpen] = useState(false);
  const i18n = useMemo(() => ({ t: translator(language), language }), [language]);
  const t = i18n.t;
  const route = useRoute();
  const [first = 'lookup', ...rest] = route;
  const page = PAGES.find((candidate) => candidate.path === first);
  const main = useRef<HTMLElement>(null);
  const menuButton = useRef<HTMLButtonElement>(null);
  const chooseLanguage = (chosen: Language) => {
    setLanguage(chosen);
    try {
      localStorage.setItem(LANGUAGE, chosen);
    } catch {
      // Not kept: the next visit starts in the browser's language.
    }
  };

  // Before paint, so that no text is ever shown (or read aloud) under the other language's tag.
  useLayoutEffect(() => {
    document.documentElement.lang = language;
    setActiveLanguage(language);
  }, [language]);
  useEffect(() => {
    setMenuOpen(false);
    document.title = `${page ? t(page.label) : t('appName')} · ${t('appName')}`;
    main.current?.focus({ preventScroll: true });
  }, [first, language]);

  const onSignedIn = (signed: Session) => {
    setSession(signed);
    navigate(
      signed.role === 'SERVICE_PROVIDER'
        ? 'participants'
        : signed.role === 'ACCESS_POINT_PROVIDER'
          ? 'lookup'
          : 'status',
    );
  };
  const onSignOut = () => {
    void signOut();
    setSession(null);
    navigate('lookup');
  };
  // A session kept over a reload may have ended meanwhile at the service: then the tab is signed out.
  useEffect(() => {
    onSessionEnded(() => setSession(null));
    if (session) void sessionIsLive();
  }, []);

  function content() {
    if (first === 'sign-in') return <SignIn onSignedIn={onSignedIn} />;
    if (!page) return <p>{t('notFound')}</p>;
    if (!page.allowed(session))
      return (
        <p role="alert">
          {session ? t('forbidden') : t('needSignIn')}
          {session ? null : (
            <>
              {' '}
              <a href={href('sign-in')}>{t('signIn')}</a>
            </>
          )}
        </p>
      );
    switch (page.path) {
      case 'lookup':
        return (
          <Lookup
            asked={rest[0] !== undefined && rest[1] !== undefined ? { icd: rest[0], number: rest[1] } : undefined}
          />
        );
      case 'catalogue':
        return <Catalogue />;
      case 'participants':
        if (rest[0] === 'new') return <ParticipantForm />;
        if (rest[0] === 'edit' && rest[1]) return <ParticipantForm identifier={rest[1]} />;
        return <Participants authority={isAuthority(session)} />;
      case 'import':
        return <ImportParticipants />;
      case 'status':
        return <StatusPage />;
      case 'service-providers':
        return <ServiceProviders />;
      case 'access-point-providers':
        return <AccessPointProviders />;
      case 'access-points':
        return <AccessPoints />;
      case 'transport-profiles':
        return <TransportProfiles />;
      case 'users':
        return <Users />;
      case 'audit':
        return <Audit authority={isAuthority(session)} />;
      case 'deliveries':
        return <Deliveries />;
      case 'password':
        return session ? <ChangePassword /> : null;
      default:
        return <CatalogueAdmin />;
    }
  }

  return (
    <I18n.Provider value={i18n}>
      <a
        class="skip"
        href="#main"
        onClick={(event) => {
          event.preventDefault();
          main.current?.focus();
        }}
      >
        {t('skip')}
      </a>
      <header
        class="top"
        onKeyDown={(event) => {
          if (event.key === 'Escape' && menuOpen) {
            setMenuOpen(false);
            menuButton.current?.focus();
          }
        }}
      >
        <div class="bar">
          <a class="brand" href={href('lookup')}>
            {t('appName')}
          </a>
          <button
            type="button"
            class="menu-toggle"
            ref={menuButton}
            aria-expanded={menuOpen}
            aria-controls="site-menu"
            onClick={() => setMenuOpen(!menuOpen)}
          >
            <span aria-hidden="true">☰</span> {t('menu')}
          </button>
        </div>
        <div id="site-menu" class={menuOpen ? 'menu open' : 'menu'}>
          <nav aria-label={t('navigation')}>
            <ul>
              {PAGES.filter((candidate) => candidate.allowed(session) && !candidate.inAccount).map((candidate) => (
                <li key={candidate.path}>
                  <a
                    href={href(candidate.path)}
                    aria-current={candidate === page ? 'page' : undefined}
                    onClick={() => setMenuOpen(false)}
                  >
                    {t(candidate.label)}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <div class="account">
            <label class="language">
              <span class="visually-hidden">{t('language')}</span>
              <select value={language} onChange={(event) => chooseLanguage(event.currentTarget.value as Language)}>
                <option value="nb" lang="nb">
                  Norsk bokmål
                </option>
                <option value="en" lang="en">
                  English
                </option>
              </select>
            </label>
            {session ? (
              <>
                <span class="who">
                  <span class="visually-hidden">{t('signedInAs')} </span>
                  <strong>{session.username}</strong> <small>{roleName(t, session.role)}</small>
                </span>
                <a
                  class="button"
                  href={href('password')}
                  aria-current={first === 'password' ? 'page' : undefined}
                  onClick={() => setMenuOpen(false)}
                >
                  {t('changePassword')}
                </a>
                <button type="button" onClick={onSignOut}>
                  {t('signOut')}
                </button>
              </>
            ) : (
              <a class="button" href={href('sign-in')}>
                {t('signIn')}
              </a>
            )}
          </div>
        </div>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        {session?.role === 'ACCESS_POINT_PROVIDER' && first === 'lookup' ? (
          <p class="status">{t('noConsole')}</p>
        ) : null}
        {content()}
      </main>
      <footer class="version">
        <small>{t('versionFooter', { version: __REGISTRY_VERSION__ })}</small>
      </footer>
    </I18n.Provider>
  );
}
